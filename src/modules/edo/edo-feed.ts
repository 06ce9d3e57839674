/**
 * The operator's change feed (spec 1.7, docs/edo.md): read under the feed's lease, one reader
 * at a time across every node; delivery, acceptance, rejection and incoming links applied
 * idempotently; the cursor advanced only after a page is applied.
 */
import { isoNow } from '../../shared/clock.js';
import { EdoOperatorError, type EdoEvent } from './edo-operator.js';
import { applyStatus } from './edo-jobs.js';
import * as repo from './edo.repository.js';
import type { EdoWorkDeps } from './edo-sending.js';

export class EdoFeed {
  constructor(private readonly deps: EdoWorkDeps) {}

  /**
   * Reads the operator's change feed under the feed's lease (one reader at a time across every
   * node) and applies it. Returns the events applied and whether more are ready now.
   */
  async poll(owner: string, signal: AbortSignal): Promise<{ applied: number; more: boolean }> {
    const feed = this.deps.operator.feedName;
    const leaseFor = () => new Date(this.deps.clock.now().getTime() + this.deps.policy.feedLeaseMs).toISOString();
    const lease = await repo.claimFeed(this.deps.db, feed, owner, isoNow(this.deps.clock), leaseFor());
    if (!lease) return { applied: 0, more: false };
    let cursor = lease.cursor;
    let applied = 0;
    let more = false;
    try {
      for (let page = 0; page < this.deps.policy.feedPagesPerPoll; page++) {
        const result = await this.deps.operator.fetchEvents(cursor, this.deps.policy.feedPageSize, signal);
        for (const event of result.events) await this.applyEvent(event);
        // Advanced only now that every event of the page is applied: a crash re-reads the page,
        // and applying an event twice changes nothing.
        if (result.nextCursor !== null) cursor = result.nextCursor;
        const kept = await repo.advanceFeed(this.deps.db, feed, owner, {
          cursor,
          applied: result.events.length,
          now: isoNow(this.deps.clock),
          leaseUntil: leaseFor(),
        });
        applied += result.events.length;
        if (!kept) return { applied, more: false };
        more = result.hasMore;
        if (!more) break;
      }
      await repo.releaseFeed(this.deps.db, feed, owner, isoNow(this.deps.clock), null);
      return { applied, more };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.deps.logger.warn({ feed, code: err instanceof EdoOperatorError ? err.code : undefined }, `EDO feed read failed: ${message}`);
      await repo.releaseFeed(this.deps.db, feed, owner, isoNow(this.deps.clock), message.slice(0, 500));
      return { applied, more: false };
    }
  }

  /** Applies one operator event; false when it is about no job of ours (ignored). */
  async applyEvent(event: EdoEvent): Promise<boolean> {
    const job = await repo.findJobForEvent(this.deps.db, event.jobId, event.operatorDocumentId);
    if (!job) {
      this.deps.logger.debug?.({ event_id: event.eventId, operator_document_id: event.operatorDocumentId }, 'EDO event about an unknown document skipped');
      return false;
    }
    if (event.type === 'link') {
      await repo.insertLink(this.deps.db, {
        team_id: job.team_id,
        public_id: job.public_id,
        link_document_id: event.link.operatorDocumentId,
        job_id: job.job_id,
        kind: event.link.kind,
        title: event.link.title,
        number: event.link.number,
        date: event.link.date,
        linked_at: new Date(event.at).toISOString(),
        received_at: isoNow(this.deps.clock),
      });
      return true;
    }
    await applyStatus(this.deps.db, this.deps.documents, {
      teamId: job.team_id,
      jobId: job.job_id,
      status: event.status,
      at: event.at,
      reason: event.reason,
      operatorDocumentId: event.operatorDocumentId,
      now: isoNow(this.deps.clock),
    });
    return true;
  }
}
