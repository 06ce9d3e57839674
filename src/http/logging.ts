/**
 * pino options: JSON lines with the request id, and no secret ever written. Keys and tokens
 * can arrive in headers and in URLs (the api_key query parameter, share and portal tokens),
 * so headers are redacted and URLs are logged through a redactor that knows the configured
 * share and portal paths.
 */
import os from 'node:os';
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream, type LogFn, type LoggerOptions } from 'pino';
import { createUrlRedactor, DEFAULT_TOKEN_PATHS } from './url-redaction.js';

export { createUrlRedactor, DEFAULT_TOKEN_PATHS, redactUrl } from './url-redaction.js';

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
