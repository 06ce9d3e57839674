/**
 * pino options: JSON lines with the request id, and no secret ever written. Keys and tokens
 * can arrive in headers and in URLs (the api_key query parameter, share and portal tokens),
 * so headers are redacted and URLs are logged through a redactor that knows the configured
 * share and portal paths.
 */
import os from 'node:os';
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream, type LogFn, type LoggerOptions } from 'pino';

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

/**
 * pino's options for the service. `base` adds fields to every line after pino's own `pid` and
 * `hostname` (an API process of several: its number, `worker`).
 */
export function loggerOptions(level: string, tokenPaths: readonly string[] = DEFAULT_TOKEN_PATHS, base?: Record<string, string | number>): LoggerOptions {
  const redact = createUrlRedactor(tokenPaths);
  return {
    level,
    ...(base ? { base: { pid: process.pid, hostname: os.hostname(), ...base } } : {}),
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        'secret',
        '*.secret',
        'password',
        '*.password',
      ],
      censor: '[REDACTED]',
    },
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: redact(request.url),
          host: request.headers?.host,
          remoteAddress: request.ip,
        };
      },
    },
  };
}

/** A destination that takes whole lines, as pino writes them (pino.destination, a stream). */
export interface LineStream {
  write(line: string): unknown;
}

const INFO = pino.levels.values.info as number;

/**
 * The request's logger, made only when something logs through it (a pino child per
 * request cost ~3 µs, for requests that mostly log nothing but the two request lines, which
 * RequestLogController writes itself). Logs exactly what the child would.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  private real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.real ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.real?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  fatal: LogFn = (...args: Parameters<LogFn>) => this.logger.fatal(...(args as [string]));
  error: LogFn = (...args: Parameters<LogFn>) => this.logger.error(...(args as [string]));
  warn: LogFn = (...args: Parameters<LogFn>) => this.logger.warn(...(args as [string]));
  info: LogFn = (...args: Parameters<LogFn>) => this.logger.info(...(args as [string]));
  debug: LogFn = (...args: Parameters<LogFn>) => this.logger.debug(...(args as [string]));
  trace: LogFn = (...args: Parameters<LogFn>) => this.logger.trace(...(args as [string]));
  silent: LogFn = (...args: Parameters<LogFn>) => this.logger.silent(...(args as [string]));

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: the request's logger is made on first use. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options);
}

/**
 * The two request lines ("incoming request", "request completed"), written as the very text
 * pino writes for them (test/http/logging.test.ts compares the two), but built as one string
 * each: no child logger, no serializer or redaction pass over the request (its URL is
 * redacted here, and the line holds no header). Errored requests and every other line go
 * through pino itself.
 */
export class RequestLogController extends LogController {
  private readonly chindings: string;

  constructor(
    logger: pino.Logger,
    private readonly stream: LineStream,
    private readonly redact: (url: string) => string,
  ) {
    super({ requestIdLogLabel: 'request_id' });
    // `,"pid":…,"hostname":"…"`: what pino writes after the time on every line.
    this.chindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
  }

  private enabled(request: FastifyRequest): boolean {
    return (pino.levels.values[request.log.level] ?? Infinity) <= INFO;
  }

  private head(request: FastifyRequest): string {
    return `{"level":${INFO},"time":${Date.now()}${this.chindings},"request_id":${JSON.stringify(request.id)}`;
  }

  override incomingRequest(request: FastifyRequest, _reply: FastifyReply): void {
    if (!this.enabled(request)) return;
    const req = JSON.stringify({
      method: request.method,
      url: this.redact(request.url),
      host: request.headers?.host,
      remoteAddress: request.ip,
    });
    this.stream.write(`${this.head(request)},"req":${req},"msg":"incoming request"}\n`);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) return super.requestCompleted(error, request, reply);
    if (!this.enabled(request)) return;
    this.stream.write(
      `${this.head(request)},"res":{"statusCode":${reply.statusCode}},"responseTime":${JSON.stringify(reply.elapsedTime)},"msg":"request completed"}\n`,
    );
  }
}

/**
 * Where the log lines go (stdout by default): written synchronously, one write per line, so the
 * process holds no log line in memory. pino's default destination writes asynchronously, at
 * most 16 KB per write and one write per turn of the event loop; under sustained load (50
 * connections, 2 log lines per request) the service produced more than that per turn and the
 * backlog grew without bound in the process (13.5 MB after 9 minutes of the read soak,
 * docs/performance.md). Written synchronously, a line costs the same CPU (~5 µs) and nothing
 * piles up: when stdout cannot keep up, the service slows down instead of growing or dropping
 * lines.
 */
export function logDestination(fd: number = 1): DestinationStream {
  return pino.destination({ dest: fd, sync: true });
}
