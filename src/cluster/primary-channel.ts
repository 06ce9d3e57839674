/**
 * An API process's end of the IPC channel to the primary: calls with an id, each answered by
 * the reply carrying that id or failed after its timeout; the number waiting is bounded.
 *
 * A call's timeout measures the primary, not this process: it starts when the call is written
 * to the channel (calls wait for the end of the turn, in a batch), and an answer that came in
 * time but is still unread when it expires is taken (src/shared/reply-timeout.ts). Otherwise a
 * busy API process would take its own slowness for the primary's and fail calls the primary had
 * answered: a rate-limit count that fails is served uncounted. When
 * the channel closes (the primary is gone) Node's cluster module ends this process at once
 * (`process.exit(0)` on 'disconnect'): nothing here outlives it.
 */
import { setReplyTimeout } from '../shared/reply-timeout.js';
import { Batcher } from './batcher.js';
import { isOurs, LIMITS, type CallOp, type ToApiProcess, type ToPrimary } from './messages.js';

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  op: CallOp;
  timeoutMs: number;
  onTimeout: ((id: number) => void) | undefined;
  /** Set once the call is written to the channel. */
  timer: NodeJS.Timeout | null;
}

export class PrimaryUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrimaryUnavailableError';
  }
}

/** A call the primary did not answer in time. */
export class CallTimeoutError extends PrimaryUnavailableError {
  constructor(op: CallOp, timeoutMs: number) {
    super(`the primary did not answer ${op} within ${timeoutMs} ms`);
    this.name = 'CallTimeoutError';
  }
}

export class PrimaryChannel {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private readonly listeners = new Map<string, (message: ToApiProcess) => void>();
  private readonly outbox = new Batcher<ToPrimary>((batch) => {
    if (process.connected && process.send) process.send(batch);
    for (const message of batch.messages) if (message.kind === 'invoicing:call') this.arm(message.id);
  });

  constructor() {
    process.on('message', (message: unknown) => {
      if (!isOurs<ToApiProcess>(message)) return;
      if (message.kind !== 'invoicing:batch') this.receive(message);
      else if (Array.isArray(message.messages)) for (const one of message.messages) this.receive(one);
    });
  }

  /**
   * Asks the primary; resolves with its reply's value. After `timeoutMs` without a reply the
   * call fails (and `onTimeout` runs with its id, e.g. to withdraw a request still queued).
   */
  call(op: CallOp, args: unknown, timeoutMs: number, onTimeout?: (id: number) => void): Promise<unknown> {
    if (!process.connected || !process.send) return Promise.reject(new PrimaryUnavailableError('no IPC channel to the primary'));
    if (this.pending.size >= LIMITS.pendingCalls) {
      return Promise.reject(new PrimaryUnavailableError(`${LIMITS.pendingCalls} calls to the primary are already waiting`));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, op, timeoutMs, onTimeout, timer: null });
      this.send({ kind: 'invoicing:call', id, op, args });
    });
  }

  /** Starts a written call's timeout. */
  private arm(id: number): void {
    const call = this.pending.get(id);
    if (call === undefined || call.timer !== null) return;
    call.timer = setReplyTimeout(() => {
      if (this.pending.get(id) !== call) return;
      this.pending.delete(id);
      call.onTimeout?.(id);
      call.reject(new CallTimeoutError(call.op, call.timeoutMs));
    }, call.timeoutMs);
  }

  /** A one-way message, sent with the others of this turn; dropped when the channel is closed (the process is ending then). */
  send(message: ToPrimary): void {
    this.outbox.push(message);
  }

  /** A message sent at once, after those queued; `done` runs once it is written (or cannot be). */
  sendNow(message: ToPrimary, done: () => void): void {
    this.outbox.flush();
    if (!process.connected || !process.send) {
      done();
      return;
    }
    process.send(message, undefined, {}, () => done());
  }

  /** Handles the primary's own messages of `kind` (`invoicing:shutdown`, `invoicing:collect-metrics`). */
  on<K extends ToApiProcess['kind']>(kind: K, listener: (message: Extract<ToApiProcess, { kind: K }>) => void): void {
    this.listeners.set(kind, listener as (message: ToApiProcess) => void);
  }

  private receive(message: ToApiProcess): void {
    if (message.kind === 'invoicing:batch') return;
    if (message.kind !== 'invoicing:reply') {
      this.listeners.get(message.kind)?.(message);
      return;
    }
    const call = this.pending.get(message.id);
    // Unknown id: the call timed out meanwhile (its timeout has already dealt with it).
    if (call === undefined) return;
    this.pending.delete(message.id);
    if (call.timer !== null) clearTimeout(call.timer);
    if (message.error !== undefined) call.reject(new Error(message.error));
    else call.resolve(message.value);
  }
}
