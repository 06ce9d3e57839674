/**
 * The side effects of a document write (CONVENTIONS rule 11): the revision's e-mails and its
 * EDO sync. They leave a write in one of two forms only:
 *
 * - rows written by their owning module inside the write's transaction: the e-mails' outbox
 *   rows (notifications `plan`/`write`/`enqueue`), the EDO send's job and outbox row (edo
 *   `planSync`/`writeSend`): every update, every keyed create, and any create whose e-mails
 *   are attempted in the request or stopped by a gate, or whose EDO send is refused at once;
 * - for a create, the send recorded in the document's own row (`edo_pending_job`,
 *   `email_pending`: recorded-sends.ts), written out as those rows by the workers or by the
 *   document's next update. Measured: an EDO create 0.83 → 0.93 of a plain create's rate, an
 *   e-mailed one's CPU 1.11–1.17 → 1.03 of a plain create's (docs/performance.md).
 *
 * After the commit: the one bounded e-mail attempt and a wake-up of the EDO worker.
 */
import type { Transaction } from 'kysely';
import type { Database, InvoiceRow, ShareLinkRow } from '../../../db/types.js';
import type { Executor } from '../../../db/database.js';
import type { EdoService, EdoSync, FirstSync, PlannedSync } from '../../edo/index.js';
import type {
  DeliveryReport,
  NotificationRequest,
  NotificationService,
  PendingNotifications,
  PlannedNotifications,
  PreparedNotifications,
} from '../../notifications/index.js';
import type { AuthContext } from '../../teams/index.js';
import { edoSyncRequest, type PreparedWrite } from '../model/document-row.js';
import { edoStateOf } from '../model/edo-state.js';
import { extended } from '../../../shared/objects.js';

/** What a write queued, handed from inside its transaction to after the commit. */
export interface QueuedEffects {
  /** The e-mails to attempt now; null when notification was not asked for. */
  pending: PendingNotifications | null;
  /** The EDO job written; null when nothing is to be sent. */
  edo: PlannedSync | null;
}

/**
 * A create's effects built before its transaction (`prepareCreate`), so that the transaction,
 * which the writers take turns on, only runs their statements.
 */
export interface EarlyEffects {
  /** The e-mails as they are when the daily quota lets them through; null without notification. */
  notifications: PreparedNotifications | null;
  /**
   * The EDO send; null when there is none. One to make is recorded in the document's row
   * (`edo_pending_job`; the worker writes its job and outbox row after the commit: docs/edo.md,
   * "Recorded sends"); one refused at once (no seller participant id) comes with its rows
   * (`send`), written with the document.
   */
  edo: FirstSync | null;
}

/**
 * A create whose effects are all in its own row (`aloneCreate`): none, or an EDO send and
 * e-mails recorded there whose daily quota its node holds. Nothing else is written with it, so
 * the store may write it on its own, outside a transaction.
 */
export interface AloneCreate {
  /** What `enqueue` would hand on, once the document is written. */
  queued: QueuedEffects;
  /**
   * Call when the document is known not to have been written (the store did not write it
   * alone, or the server rejected it): the e-mails taken from what the node holds of the quota
   * are held again. Not when its outcome is unknown (the connection was lost).
   */
  undo(): void;
}

export class WriteEffects {
  constructor(private readonly deps: { notifications: NotificationService; edo: EdoService }) {}

  /**
   * A create, inside its transaction and before the document row is inserted: the e-mails are
   * planned (gates, daily quota) and their outcome goes into `row` (`notifications`, and
   * `restricted` when the quota stopped some), so the row is written once, with it.
   * Hand the result to `enqueue` after the row and its share links.
   */
  async plan(
    trx: Transaction<Database>,
    auth: Extract<AuthContext, { mode: 'live' }>,
    row: InvoiceRow,
    prepared: PreparedWrite,
    links: ShareLinkRow[],
    early?: EarlyEffects,
  ): Promise<PlannedNotifications | null> {
    if (!prepared.envelope.notify) return null;
    const request = this.notificationRequest(auth, row, prepared, links);
    const planned = await this.deps.notifications.plan(trx, request, early?.notifications ?? undefined);
    // As prepared (every e-mail let through): `prepareCreate` has put its outcome in the row.
    if (early && !this.rowChanged(early, planned)) return planned;
    // The quota did not grant them all: the rows are written here (a record is for all granted).
    row.email_pending = null;
    row.notifications = JSON.stringify(planned.outcome);
    if (planned.restricted) this.restrict(row);
    return planned;
  }

  /**
   * Before a create's transaction: the e-mails (their rows and outcome as they are when the
   * daily quota lets them through, the outcome put in `row`) and the EDO send, built without
   * the database. Hand the result to `plan` and `enqueue`; when `plan` finds the quota short it
   * builds the e-mails again and changes `row` (see `rowChanged`).
   */
  prepareCreate(auth: Extract<AuthContext, { mode: 'live' }>, row: InvoiceRow, prepared: PreparedWrite, links: ShareLinkRow[]): EarlyEffects {
    if (row.revision !== 1) throw new Error('prepareCreate is for a new document');
    let notifications: PreparedNotifications | null = null;
    if (prepared.envelope.notify) {
      notifications = this.deps.notifications.prepare(this.notificationRequest(auth, row, prepared, links));
      // On a node whose e-mails the workers send: recorded in the row, written by the worker
      // (docs/notifications.md, "Recorded e-mails"), unless `plan` finds the quota short. The
      // outcome is then answered from the record (`storedNotifications`) and stored when the
      // record is taken: not stored twice in the row.
      row.email_pending = notifications.record;
      row.notifications = notifications.record === null ? JSON.stringify(notifications.allGranted.outcome) : null;
    }
    const edo = row.buyer_edo_id ? this.deps.edo.prepareFirstSync(edoSyncRequest(row, prepared.invoice), row.created_at) : null;
    if (edo && edo.send === null) row.edo_pending_job = edo.planned.jobId;
    return { notifications, edo };
  }

  /** Whether `plan` changed the row `prepareCreate` had prepared (the quota stopped some e-mail). */
  rowChanged(early: EarlyEffects, planned: PlannedNotifications | null): boolean {
    return early.notifications !== null && planned !== early.notifications.allGranted;
  }

  /**
   * Inside the document's transaction, after the document row and its share links. When the
   * daily quota stopped some e-mail, the document is `restricted` (stored by the notifications
   * service, mirrored on `row`). A create passes what `plan` returned: its outcome is already
   * in the row.
   */
  async enqueue(
    trx: Transaction<Database>,
    auth: Extract<AuthContext, { mode: 'live' }>,
    row: InvoiceRow,
    prepared: PreparedWrite,
    links: ShareLinkRow[],
    planned?: PlannedNotifications | null,
    early?: EarlyEffects,
  ): Promise<QueuedEffects> {
    let pending: PendingNotifications | null = null;
    if (planned) {
      pending = row.email_pending ? this.deps.notifications.recordedPending(planned) : await this.deps.notifications.write(trx, planned);
    } else if (prepared.envelope.notify) {
      pending = await this.deps.notifications.enqueue(trx, this.notificationRequest(auth, row, prepared, links));
      if (pending.outcome.block_reason === 'emails_per_day_exceeded') this.restrict(row);
    }
    // A new document without buyer_edo_id has nothing to sync (and no earlier job to supersede).
    const edo = early
      ? early.edo && (early.edo.send ? await this.deps.edo.writeSend(trx, early.edo.send) : early.edo.planned)
      : row.revision === 1 && !row.buyer_edo_id
        ? null
        : await this.deps.edo.planSync(trx, edoSyncRequest(row, prepared.invoice));
    return { pending, edo };
  }

  /**
   * A new document whose effects `prepareCreate` put in its row: nothing to write besides the
   * document (no e-mail rows: they are recorded, their quota taken from what the node holds; no
   * EDO rows: the send is recorded). Null when its transaction has rows to write (e-mails
   * attempted in the request or stopped by a gate, a quota to reserve, an EDO send refused at
   * once), or the node holds too little of the quota.
   */
  aloneCreate(auth: Extract<AuthContext, { mode: 'live' }>, early: EarlyEffects): AloneCreate | null {
    if (early.edo?.send) return null;
    let pending: PendingNotifications | null = null;
    let undo = () => undefined as void;
    if (early.notifications) {
      const held = this.deps.notifications.takeRecorded(early.notifications, auth.tariff.emails_per_day);
      if (held === null) return null;
      pending = held.pending;
      undo = held.undo;
    }
    return { queued: { pending, edo: early.edo?.planned ?? null }, undo };
  }

  private notificationRequest(
    auth: Extract<AuthContext, { mode: 'live' }>,
    row: InvoiceRow,
    prepared: PreparedWrite,
    links: ShareLinkRow[],
  ): NotificationRequest {
    return {
      teamId: auth.teamId,
      teamLocale: auth.team.locale,
      tariff: auth.tariff,
      publicId: row.public_id,
      revision: row.revision,
      document: extended(prepared.invoice, { seller_status: row.seller_status }),
      totals: { total: row.total },
      links,
    };
  }

  /** The daily quota stopped e-mail: an active document becomes `restricted` (operating contract 4). */
  private restrict(row: InvoiceRow): void {
    if (row.service_status !== 'active') return;
    row.service_status = 'restricted';
    row.service_status_reason = 'emails_per_day_exceeded';
  }

  /** The e-mail outcome before any attempt: what was enqueued, or nothing asked. */
  undelivered(row: InvoiceRow, pending: PendingNotifications | null): DeliveryReport {
    const notifications = pending ? pending.outcome : this.deps.notifications.notRequested(row.public_id);
    return { notifications, status: 200, delivered: false };
  }

  /** `metadata.edo` of the document: what a create queued, else as its row describes it (model/edo-state.ts). */
  async edoState(db: Executor, row: InvoiceRow, queued?: QueuedEffects): Promise<EdoSync | null> {
    if (row.revision === 1 && queued) return queued.edo?.state ?? null;
    return edoStateOf(this.deps.edo, db, row);
  }

  /**
   * Inside an update's transaction, first: what `current`'s create recorded is written, as the
   * workers would have: its EDO send as a job (so the update compares with it and supersedes it
   * like any other) and its e-mails as outbox rows.
   */
  async writeRecorded(trx: Executor, current: InvoiceRow): Promise<void> {
    const { team_id: teamId, public_id: publicId, edo_pending_job: jobId, email_pending: record } = current;
    if (jobId) await this.deps.edo.writeRecordedSend(trx, { teamId, publicId, jobId });
    if (record) await this.deps.notifications.writeRecordedEmail(trx, { teamId, publicId, record });
  }

  /**
   * After the commit: the EDO worker is woken for a queued job, and the one bounded e-mail
   * attempt is made (never throws; the worker retries the rest). A delivery moves `row` to `sent`.
   */
  async afterCommit(db: Executor, row: InvoiceRow, queued: QueuedEffects): Promise<{ report: DeliveryReport; edo: EdoSync | null }> {
    if (queued.edo?.jobId) this.deps.edo.notifyQueued();
    let report = this.undelivered(row, queued.pending);
    if (queued.pending) {
      report = await this.deps.notifications.deliverNow(queued.pending);
      if (report.delivered && row.buyer_status === 'not_sent') row.buyer_status = 'sent';
    }
    return { report, edo: await this.edoState(db, row, queued) };
  }
}
