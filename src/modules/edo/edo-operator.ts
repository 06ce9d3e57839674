/**
 * The EDO operator port: what this service needs from an electronic document exchange
 * operator (domain reference, "EDO"). Two adapters implement it: the built-in `sandbox`
 * (sandbox-operator.ts) and the HTTP connector (http-operator.ts, protocol in
 * docs/edo-operator-protocol.md). Sync jobs (edo.service.ts) only ever talk to this port.
 */

export type EdoOperatorKind = 'sandbox' | 'http';

/** One document revision, sent from the seller's participant id to the buyer's. */
export interface EdoOutgoingDocument {
  /**
   * The send job's stable id (≥128 random bits): the operator's idempotency key. Every retry of
   * a job repeats it, and a repeated job id must return the first send's receipt, never a copy.
   */
  jobId: string;
  /** Seller participant id (the organization's `edo_id`). */
  sender: string;
  /** Buyer participant id (`buyer_edo_id`). */
  recipient: string;
  document: {
    kind: 'invoice';
    publicId: string;
    revision: number;
    number: string;
    /** Calendar date, YYYY-MM-DD. */
    date: string;
    currency: string;
    /** Decimal string with two fraction digits, e.g. "19789.99". */
    total: string;
    title: string;
    seller: { name: string; inn: string; kpp: string | null };
    buyer: { name: string; inn: string | null; kpp: string | null };
  };
  /** The printable document of this revision («Счёт на оплату», PDF). */
  file: { name: string; contentType: 'application/pdf'; content: Buffer };
}

export interface EdoSendReceipt {
  /** The operator's id of the sent document; the same for a repeated job id. */
  operatorDocumentId: string;
  /** `sent`: the operator took it; `delivered`: already in the recipient's box. */
  status: 'sent' | 'delivered';
}

export type EdoDecision = 'delivered' | 'accepted' | 'rejected';

/** A document that refers to ours (the buyer's receipt notice, rejection, act, …). */
export interface EdoLinkedDocument {
  /** The operator's id of the linked document: unique, so a link is attached once. */
  operatorDocumentId: string;
  /** Machine-readable kind, e.g. `receipt_notice`, `rejection_notice`, `act`, `upd`. */
  kind: string;
  title: string;
  number: string | null;
  /** Calendar date, YYYY-MM-DD, when the linked document has one. */
  date: string | null;
}

interface EdoEventBase {
  /** The operator's event id (unique within its feed). */
  eventId: string;
  /** Our job id when the operator knows it (it was the idempotency key of the send). */
  jobId: string | null;
  /** The operator's id of our document. */
  operatorDocumentId: string;
  /** When it happened at the operator, ISO 8601 UTC. */
  at: string;
}

export type EdoEvent =
  | (EdoEventBase & { type: 'status'; status: EdoDecision; reason: string | null })
  | (EdoEventBase & { type: 'link'; link: EdoLinkedDocument });

/** One read of the change feed. */
export interface EdoFeedPage {
  events: EdoEvent[];
  /** The cursor to read from next time, stored only after every event here was applied. */
  nextCursor: string | null;
  /** True when more events are ready now (read again at once). */
  hasMore: boolean;
}

/** Why an operator call failed; `permanent` ones are not retried. */
export type EdoErrorCode =
  | 'operator_unreachable'
  | 'operator_timeout'
  | 'operator_unavailable'
  | 'operator_auth_failed'
  | 'operator_protocol_error'
  | 'operator_rejected'
  | 'participant_not_found'
  | 'seller_edo_id_missing'
  /** Ours, not the operator's: the document or its PDF could not be prepared. */
  | 'document_unavailable';

export class EdoOperatorError extends Error {
  constructor(
    message: string,
    readonly code: EdoErrorCode,
    readonly permanent: boolean,
    /** The operator asked to wait this long before the next call (Retry-After). */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'EdoOperatorError';
  }
}

export interface EdoOperator {
  readonly kind: EdoOperatorKind;
  /**
   * A name for this operator's change feed: the cursor is stored under it, so two connectors
   * to different operators never share one.
   */
  readonly feedName: string;
  /** Sends one document; throws EdoOperatorError. Idempotent by `jobId`. */
  send(document: EdoOutgoingDocument, signal: AbortSignal): Promise<EdoSendReceipt>;
  /** Reads events after `cursor` (null: from the beginning); throws EdoOperatorError. */
  fetchEvents(cursor: string | null, limit: number, signal: AbortSignal): Promise<EdoFeedPage>;
  close?(): Promise<void>;
}
