import { workerHeartbeats, type WorkerLoop } from './delivery-metrics.js';

/**
 * A background loop: runs `task`, then again at once when it reports more work, otherwise
 * after `intervalMs`. `wake()` brings the next run forward (e.g. right after a commit that
 * queued work). One run at a time; `stop()` waits for the run under way. A loop with a
 * `heartbeat` name sets `invoicing_worker_last_pass_timestamp_seconds` after each pass that
 * did not fail (the "worker not running" alert).
 */
export class PollingLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private wakeRequested = false;

  constructor(
    /** Resolves true when more work is ready now. */
    private readonly task: () => Promise<boolean>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
    private readonly heartbeat: WorkerLoop | null = null,
  ) {}

  get active(): boolean {
    return !this.stopped;
  }

  /** Starts the loop: the first run after `firstDelayMs` (at once by default). */
  start(firstDelayMs = 0): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(firstDelayMs);
  }

  /** Runs as soon as possible: now when idle, right after the run under way otherwise. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeRequested = true;
      return;
    }
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.tick().finally(() => {
        this.running = null;
      });
    }, delayMs);
  }

  private async tick(): Promise<void> {
    this.wakeRequested = false;
    let more = false;
    try {
      more = await this.task();
      if (this.heartbeat !== null) workerHeartbeats.set({ loop: this.heartbeat }, Date.now() / 1000);
    } catch (err) {
      this.onError(err);
    }
    this.schedule(more || this.wakeRequested ? 0 : this.intervalMs);
  }
}
