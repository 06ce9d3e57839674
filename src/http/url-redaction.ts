/**
 * URLs without their secrets, for the logs (logging.ts) and the traces (src/tracing/): the
 * api_key / token query parameters, and the tokens in share and portal paths, whichever paths
 * INVOICING_SHARE_URL and INVOICING_PORTAL_URL give them. Pure: imports nothing, so the tracing
 * setup can load it before the instrumented modules.
 */
const SECRET_PARAMS = new Set(['api_key', 'token', 'access_token', 'key', 'secret']);

/** A parameter name as the query parser sees it: `api%5Fkey` and `api_key` are the same key. */
function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).trim().toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const name = pair.slice(0, eq);
      return SECRET_PARAMS.has(decodedName(name)) ? `${name}=[REDACTED]` : pair;
    })
    .join('&');
}

/** The default share and portal paths (`/s`, `/portal`). */
export const DEFAULT_TOKEN_PATHS: readonly string[] = ['/s', '/portal'];
/** The service's own paths: never a token, even when a share or portal base sits at the root. */
const SERVICE_PATH = /^\/(?:api|healthz|readyz|metrics)(?:[/?#]|$)/;

/**
 * Share and portal paths carry a token after their base path and its mode words (`/s/TOKEN`,
 * `/portal/document/edit/TOKEN`); everything from the first other segment on is redacted (a
 * token may itself be lowercase). The pages' static files (`…/assets/…`) are kept.
 */
function tokenPattern(base: string): RegExp {
  const escaped = base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^(${escaped}(?:/(?:document|view|edit))*)/(?!assets/)[^?#]+`);
}

/** Redacts URLs for the logs, given the share and portal bases' paths ('' for a base at the root). */
export function createUrlRedactor(tokenPaths: readonly string[] = DEFAULT_TOKEN_PATHS): (url: string) => string {
  const patterns = [...new Set(tokenPaths)].sort((a, b) => b.length - a.length).map((base) => ({ root: base === '', re: tokenPattern(base) }));
  return (url: string) => {
    const q = url.indexOf('?');
    let path = q < 0 ? url : url.slice(0, q);
    for (const { root, re } of patterns) {
      if (root && SERVICE_PATH.test(path)) continue;
      if (re.test(path)) {
        path = path.replace(re, '$1/[REDACTED]');
        break;
      }
    }
    return q < 0 ? path : `${path}?${redactQuery(url.slice(q + 1))}`;
  };
}

export const redactUrl = createUrlRedactor();
