/**
 * The background side of the outbox: claims due e-mails with a lease, attempts each once,
 * reschedules failures with exponential backoff and records the outcome on the documents.
 * Runs in the server process by default and alone as `invoicing worker`; any number of
 * workers may share one database (claims are disjoint, results are fenced by the lease).
 * Each worker also runs retention hourly: the daily quota's rows of past days, and e-mails that
 * finished more than INVOICING_DELIVERY_RETENTION_DAYS ago, a batch per statement until none is
 * left (several workers doing so at once delete disjoint or already deleted rows: harmless).
 */
import { PollingLoop } from '../../shared/polling-loop.js';
import { attemptClaimedRows, newLeaseOwner, yieldToIo, type OutboxBatchResult } from '../../shared/background-work.js';
import type { NotificationLogger } from './notification-model.js';
import type { NotificationService } from './notification.service.js';
import { countDelivery } from '../../shared/delivery-metrics.js';
import { PRUNE_BATCH } from './store/portable.js';
import { extended } from '../../shared/objects.js';

/**
 * How often a worker deletes past days' quota rows; the first time 1–2 minutes after it starts
 * (at random, so that workers started together do not all run it at once, and so that it stays
 * out of a node's start).
 */
export const QUOTA_RETENTION_INTERVAL_MS = 60 * 60 * 1000;
const QUOTA_RETENTION_FIRST_MS = 60 * 1000;

export interface WorkerOptions {
  /** Names this worker's leases; a fresh one per worker by default. */
  owner?: string;
  /** INVOICING_DELIVERY_RETENTION_DAYS: finished e-mails older than this are deleted (default 30). */
  emailRetentionDays?: number;
  logger?: NotificationLogger;
}

export type BatchResult = OutboxBatchResult;

export class OutboxWorker {
  readonly owner: string;
  private readonly loop: PollingLoop;
  /** Retention, hourly: past days' quota rows and old finished e-mails, in batches until none is left. */
  private readonly retention: PollingLoop;
  private readonly abort = new AbortController();
  private readonly logger: NotificationLogger | undefined;
  private readonly emailRetentionDays: number;

  constructor(
    private readonly service: NotificationService,
    options: WorkerOptions = {},
  ) {
    this.owner = options.owner ?? newLeaseOwner();
    this.logger = options.logger;
    this.loop = new PollingLoop(
      async () => {
        const result = await this.runOnce();
        return result.claimed >= this.service.policy.batchSize || result.recorded >= this.service.policy.batchSize;
      },
      service.policy.pollIntervalMs,
      (err) => this.logger?.error({ err, owner: this.owner }, 'outbox batch failed'),
      'email',
    );
    this.emailRetentionDays = options.emailRetentionDays ?? 30;
    this.retention = new PollingLoop(
      async () => {
        await this.runRetention();
        return false;
      },
      QUOTA_RETENTION_INTERVAL_MS,
      (err) => this.logger?.error({ err, owner: this.owner }, 'e-mail retention failed'),
    );
  }

  /**
   * Writes the e-mails of up to `batchSize` creates that recorded them in their documents' rows
   * (`recorded`: how many documents), then claims up to `batchSize` due e-mails and attempts
   * each once.
   */
  async runOnce(): Promise<BatchResult & { recorded: number }> {
    const policy = this.service.policy;
    const recorded = await this.service.writeRecordedEmails(policy.batchSize);
    const rows = await this.service.claimDue(this.owner, policy.batchSize);
    if (rows.length === 0) return { claimed: 0, sent: 0, retrying: 0, failed: 0, recorded };
    const started = Date.now();
    const result = await attemptClaimedRows(rows, policy, this.abort.signal, async (row, signal) => {
      const state = await this.service.attempt(row, this.owner, signal);
      countDelivery('email', state);
      return state;
    });
    const documents = new Map(rows.map((r) => [`${r.team_id}\u0000${r.public_id}\u0000${r.revision}`, r]));
    for (const r of documents.values()) {
      await this.service.refreshOutcome(r.team_id, r.public_id, r.revision, Date.now() - started, policy.attemptTimeoutMs);
    }
    this.logger?.info({ ...result, recorded, owner: this.owner }, 'outbox batch done');
    return extended(result, { recorded });
  }

  /**
   * One retention pass: past days' quota rows, then e-mails finished more than
   * `emailRetentionDays` ago, `PRUNE_BATCH` rows per statement until none is left, yielding to
   * other work between statements (each is a short write of its own).
   */
  async runRetention(): Promise<{ quota: number; emails: number }> {
    const untilDone = async (batch: () => Promise<number>): Promise<number> => {
      let total = 0;
      for (;;) {
        const deleted = await batch();
        total += deleted;
        if (deleted < PRUNE_BATCH) return total;
        await yieldToIo();
      }
    };
    const quota = await untilDone(() => this.service.pruneQuota());
    const emails = await untilDone(() => this.service.pruneFinishedEmails(this.emailRetentionDays));
    return { quota, emails };
  }

  /** Attempts batches until nothing is due now (for the CLI and tests). */
  async drain(): Promise<BatchResult> {
    const total: BatchResult = { claimed: 0, sent: 0, retrying: 0, failed: 0 };
    for (;;) {
      const r = await this.runOnce();
      total.claimed += r.claimed;
      total.sent += r.sent;
      total.retrying += r.retrying;
      total.failed += r.failed;
      if (r.claimed < this.service.policy.batchSize && r.recorded < this.service.policy.batchSize) return total;
    }
  }

  /** Polls every `pollIntervalMs`; a full batch is followed by the next one at once. */
  start(): void {
    this.loop.start();
    this.retention.start(QUOTA_RETENTION_FIRST_MS * (1 + Math.random()));
  }

  /** Stops polling and waits for the batch under way; its rows finish or keep their lease. */
  async stop(): Promise<void> {
    await Promise.all([this.loop.stop(), this.retention.stop()]);
  }

  /** Stops at once: attempts under way are aborted and rescheduled as failed attempts. */
  async kill(): Promise<void> {
    this.abort.abort();
    await this.stop();
  }
}
