/**
 * Messages to one peer, sent together once per turn of the event loop: under load an API
 * process counts many requests in one turn, and one IPC write (one wakeup of the primary)
 * instead of one per request halves the CPU the channel costs on each side (measured with
 * seven-rule counts at 20 concurrent calls: 4.6 → 2.3 µs per call in the primary, 5.0 → 2.7 in
 * the API process). A message waits at most until the end of the current turn.
 */
import { LIMITS, type Batch } from './messages.js';

export class Batcher<T> {
  private queue: T[] = [];

  constructor(private readonly write: (batch: Batch<T>) => void) {}

  push(message: T): void {
    this.queue.push(message);
    if (this.queue.length === 1) setImmediate(this.flush);
    else if (this.queue.length >= LIMITS.batch) this.flush();
  }

  /** Sends what is queued now (before a message that must not overtake it, or at once). */
  readonly flush = (): void => {
    if (this.queue.length === 0) return;
    const messages = this.queue;
    this.queue = [];
    this.write({ kind: 'invoicing:batch', messages });
  };
}
