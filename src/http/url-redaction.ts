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
/** The service's own first segments: never a token, even when a share or portal base sits at the root. */
const SERVICE_SEGMENTS = new Set(['api', 'healthz', 'readyz', 'metrics']);
/** The portal's mode words between its base and the token (`/portal/document/edit/TOKEN`). */
const MODE_WORDS = new Set(['document', 'view', 'edit']);
/** A request target in absolute form (`http://host/s/TOKEN`): its scheme and authority. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;
/** A percent escape of an ASCII character (the only ones a base, a mode word or `/` can be). */
const ASCII_ESCAPES = /%([0-7][0-9a-f])/gi;
const HAS_ASCII_ESCAPE = /%[0-7][0-9a-f]/i;

/**
 * The path's segments as any router might read them, for matching only: ASCII percent escapes
 * decoded, again while any remain (`%2573` is `%73` is `s`; at most 4 rounds), `\` read as `/`,
 * empty and `.` segments dropped, `..` going up, and each segment cut at `;` (a path parameter).
 * However a path to a token is written (`/%73/TOKEN`, `//s//TOKEN/`, `/S/TOKEN`,
 * `/x/../s/TOKEN`), it reads as the base, the mode words and the token.
 */
function segmentsOf(path: string): string[] {
  let decoded = path;
  for (let round = 0; round < 4 && HAS_ASCII_ESCAPE.test(decoded); round++) {
    decoded = decoded.replace(ASCII_ESCAPES, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  const out: string[] = [];
  for (const raw of decoded.replace(/\\/g, '/').split('/')) {
    const segment = raw.split(';')[0] as string;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return out;
}

/**
 * Share and portal paths carry a token after their base path and its mode words (`/s/TOKEN`,
 * `/portal/document/edit/TOKEN`). The path is matched as `segmentsOf` reads it, bases and mode
 * words case-insensitively, so no way of writing it keeps a token out of the match; a matching
 * path is logged as the configured base, the mode words and `[REDACTED]` (the query kept,
 * its secret parameters redacted). The pages' static files (`…/assets/…`) are logged as they
 * are, and so is every other path.
 */
export function createUrlRedactor(tokenPaths: readonly string[] = DEFAULT_TOKEN_PATHS): (url: string) => string {
  const bases = [...new Set(tokenPaths)]
    .map((base) => ({ base, segments: segmentsOf(base).map((s) => s.toLowerCase()) }))
    .sort((a, b) => b.segments.length - a.segments.length);
  const redactPath = (path: string): string | null => {
    const segments = segmentsOf(path);
    const lower = segments.map((s) => s.toLowerCase());
    for (const { base, segments: baseSegments } of bases) {
      if (!baseSegments.every((s, i) => lower[i] === s)) continue;
      if (baseSegments.length === 0 && SERVICE_SEGMENTS.has(segments[0] ?? '')) continue;
      let at = baseSegments.length;
      while (at < segments.length - 1 && MODE_WORDS.has(lower[at] as string)) at++;
      if (at >= segments.length) continue;
      if (segments[at] === 'assets' && at < segments.length - 1) return null;
      return `${base}${lower.slice(baseSegments.length, at).map((s) => `/${s}`).join('')}/[REDACTED]`;
    }
    return null;
  };
  return (url: string) => {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const redacted = redactPath(path.replace(ABSOLUTE_FORM, ''));
    const shownPath = redacted ?? path;
    return q < 0 ? shownPath : `${shownPath}?${redactQuery(url.slice(q + 1))}`;
  };
}

export const redactUrl = createUrlRedactor();
