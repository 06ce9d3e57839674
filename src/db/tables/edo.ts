/**
 * The tables of the edo module: sync jobs, incoming links, the feed cursors, and the sandbox
 * operator's mailbox and feed. Conventions: src/db/types.ts.
 */
import type { Selectable } from 'kysely';

export type EdoJobStatus = 'queued' | 'sent' | 'delivered' | 'accepted' | 'rejected' | 'failed' | 'superseded';

/**
 * One revision of a document sent to the buyer through EDO. Its attempts, retry time and last
 * error live in the outbox row with the same id (`kind: 'edo_send'`); this row holds what the
 * operator reported.
 */
export interface EdoJobsTable {
  team_id: string;
  /** The outbox row id, and the operator's idempotency key. */
  job_id: string;
  public_id: string;
  revision: number;
  operator: string;
  seller_edo_id: string | null;
  buyer_edo_id: string;
  /** What was sent (document without seller_status, both participant ids), to send a change once. */
  content_hash: string;
  status: EdoJobStatus;
  operator_document_id: string | null;
  rejection_reason: string | null;
  queued_at: string;
  sent_at: string | null;
  delivered_at: string | null;
  accepted_at: string | null;
  rejected_at: string | null;
  failed_at: string | null;
  updated_at: string;
}

/** A document the operator reported as referring to ours. */
export interface EdoLinksTable {
  team_id: string;
  public_id: string;
  link_document_id: string;
  job_id: string;
  kind: string;
  title: string;
  number: string | null;
  date: string | null;
  /** When the operator reported the link (its event's time): the order links are shown in. */
  linked_at: string;
  received_at: string;
}

/** An operator's change-feed cursor, advanced only after its events were applied. */
export interface EdoFeedsTable {
  feed: string;
  cursor: string | null;
  locked_by: string | null;
  locked_until: string | null;
  events_applied: number;
  last_polled_at: string | null;
  last_error: string | null;
  updated_at: string;
}

/** The sandbox operator's mailbox: one row per job it accepted. */
export interface EdoSandboxDocumentsTable {
  job_id: string;
  document_id: string;
  sender: string;
  recipient: string;
  send_attempts: number;
  /** 1 when the send went through (the events were scheduled). */
  accepted: number;
  created_at: string;
}

/** The sandbox operator's change feed, each event due at `at`. */
export interface EdoSandboxEventsTable {
  id: string;
  at: string;
  job_id: string;
  document_id: string;
  /** The event as JSON (an EdoEvent). */
  body: string;
}

export interface EdoTables {
  edo_jobs: EdoJobsTable;
  edo_links: EdoLinksTable;
  edo_feeds: EdoFeedsTable;
  edo_sandbox_documents: EdoSandboxDocumentsTable;
  edo_sandbox_events: EdoSandboxEventsTable;
}

export type EdoJobRow = Selectable<EdoJobsTable>;
export type EdoLinkRow = Selectable<EdoLinksTable>;
