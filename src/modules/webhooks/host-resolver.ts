/**
 * Bounded name resolution for webhook hosts. `dns.lookup` (getaddrinfo, what http.request uses)
 * runs on libuv's thread pool, 4 threads by default, which also serves file reads, crypto and
 * zlib, and it cannot be cancelled: a name server that never answers holds a thread for the
 * system resolver's own timeout (5 s per try and server with glibc's defaults). So:
 *
 * - at most `maxConcurrent` look-ups run at once per process (2: half the default pool); a slot
 *   is freed only when its look-up really returns, so look-ups given up on still count;
 * - a caller waits at most `timeoutMs` (INVOICING_WEBHOOK_DNS_TIMEOUT_MS, default 2000) in all,
 *   queueing for a slot included, then gets an `ETIMEOUT` error;
 * - at most `maxWaiting` callers queue (64); one more is refused at once with `EBUSY`.
 */
import dns from 'node:dns';

export type LookupFunction = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

export interface HostResolverOptions {
  timeoutMs: number;
  maxConcurrent?: number;
  maxWaiting?: number;
  /** The system resolver; replaced only by tests that need a name server that never answers. */
  lookup?: LookupFunction;
}

export class ResolveError extends Error {
  constructor(
    readonly code: 'ETIMEOUT' | 'EBUSY',
    message: string,
  ) {
    super(message);
    this.name = 'ResolveError';
  }
}

export class HostResolver {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly maxConcurrent: number;
  private readonly maxWaiting: number;
  private readonly lookupFn: LookupFunction;

  constructor(private readonly options: HostResolverOptions) {
    this.maxConcurrent = options.maxConcurrent ?? 2;
    this.maxWaiting = options.maxWaiting ?? 64;
    this.lookupFn = options.lookup ?? (dns.lookup as unknown as LookupFunction);
  }

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /** Every address `hostname` resolves to, in the resolver's order; rejects with the resolver's error or a ResolveError. */
  resolve(hostname: string): Promise<dns.LookupAddress[]> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (err: Error | null, addresses?: dns.LookupAddress[]) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(addresses ?? []);
      };
      const start = () => {
        this.active++;
        this.lookupFn(hostname, { all: true, verbatim: true }, (err, addresses) => {
          this.release();
          settle(err, addresses);
        });
      };
      const timer = setTimeout(() => {
        const queued = this.waiting.indexOf(start);
        if (queued >= 0) this.waiting.splice(queued, 1);
        settle(new ResolveError('ETIMEOUT', `the host name did not resolve within ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      if (this.active < this.maxConcurrent) start();
      else if (this.waiting.length < this.maxWaiting) this.waiting.push(start);
      else settle(new ResolveError('EBUSY', 'too many host names are being resolved at once'));
    });
  }

  private release(): void {
    this.active--;
    this.waiting.shift()?.();
  }
}
