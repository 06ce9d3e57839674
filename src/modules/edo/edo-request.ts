/** What a document write asks of EDO sync, and a send its create recorded in the document's row. */
import type { EdoOutgoingDocument } from './edo-operator.js';

/** What a document write tells EDO sync (inside its transaction). */
export interface EdoSyncRequest {
  teamId: string;
  publicId: string;
  revision: number;
  sellerStatus: string;
  /** The seller organization's participant id (organizations.edo_id). */
  sellerEdoId: string | null;
  buyerEdoId: string | null;
  /** Hash of what would be sent: the document without seller_status, and both participant ids. */
  contentHash: string;
  document: EdoOutgoingDocument['document'];
}

/** A document's recorded send (`invoices.edo_pending_job`, docs/edo.md "Recorded sends"). */
export interface RecordedSendRef {
  teamId: string;
  publicId: string;
  jobId: string;
}

/** A recorded send as its create asked for it: the job gets `jobId` and was queued at `queuedAt`. */
export interface RecordedSend {
  request: EdoSyncRequest;
  jobId: string;
  queuedAt: string;
  /** The create's W3C traceparent (null when tracing was off): its delivery continues that trace. */
  traceparent: string | null;
}
