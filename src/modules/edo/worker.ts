/**
 * The background side of EDO sync: sends due jobs (claimed with a lease, retried with backoff)
 * and reads the operator's change feed. Runs in the server process by default and in
 * `invoicing worker`; any number of workers may share one database.
 */
import { attemptClaimedRows, newLeaseOwner, type OutboxBatchResult, type WorkLogger } from '../../shared/background-work.js';
import { PollingLoop } from '../../shared/polling-loop.js';
import type { EdoService } from './edo.service.js';
import { countDelivery } from '../../shared/delivery-metrics.js';
import { extended } from '../../shared/objects.js';

export type EdoBatchResult = OutboxBatchResult;

export class EdoWorker {
  readonly owner: string;
  private readonly sends: PollingLoop;
  private readonly feed: PollingLoop;
  private readonly abort = new AbortController();

  constructor(
    private readonly service: EdoService,
    options: { owner?: string; logger?: WorkLogger } = {},
  ) {
    this.owner = options.owner ?? newLeaseOwner();
    const logger = options.logger;
    const policy = service.policy;
    this.sends = new PollingLoop(
      async () => {
        const result = await this.sendDue();
        return result.claimed >= policy.batchSize || result.recorded >= policy.batchSize;
      },
      policy.pollIntervalMs,
      (err) => logger?.error({ err, owner: this.owner }, 'EDO send batch failed'),
      'edo',
    );
    this.feed = new PollingLoop(
      async () => (await this.readFeed()).more,
      policy.feedIntervalMs,
      (err) => logger?.error({ err, owner: this.owner }, 'EDO feed read failed'),
    );
    service.onQueued(() => this.wake());
  }

  /**
   * Writes up to `batchSize` sends that creates recorded in their documents' rows (`recorded`:
   * how many), then claims up to `batchSize` due sends and attempts each once.
   */
  async sendDue(): Promise<EdoBatchResult & { recorded: number }> {
    const policy = this.service.policy;
    const recorded = await this.service.writeRecordedSends(policy.batchSize);
    const rows = await this.service.claimDue(this.owner, policy.batchSize);
    const result = await attemptClaimedRows(rows, policy, this.abort.signal, async (row, signal) => {
      const state = await this.service.attempt(row, this.owner, signal);
      if (state !== 'superseded') countDelivery('edo', state);
      return state;
    });
    return extended(result, { recorded });
  }

  /** One read of the change feed (several pages when they are ready). */
  readFeed(): Promise<{ applied: number; more: boolean }> {
    const signal = AbortSignal.any([AbortSignal.timeout(this.service.policy.attemptTimeoutMs), this.abort.signal]);
    return this.service.pollFeed(this.owner, signal);
  }

  start(): void {
    this.sends.start();
    this.feed.start();
  }

  /** A job was just queued: send it now instead of at the next poll. */
  wake(): void {
    this.sends.wake();
  }

  /** Stops polling and waits for the work under way; unfinished sends keep their lease. */
  async stop(): Promise<void> {
    await Promise.all([this.sends.stop(), this.feed.stop()]);
  }

  /** Stops at once: calls under way are aborted and recorded as failed attempts. */
  async kill(): Promise<void> {
    this.abort.abort();
    await this.stop();
  }
}
