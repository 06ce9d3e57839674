/**
 * Invoices: the documents, their writes and reads, totals and validation, share links, the
 * amount in words, the payment QR payload and the print model. The one writer of the
 * `invoices` and `share_links` tables: notifications and edo report delivery through
 * `documentStatusPort` (wired in app.ts), sharing calls the status functions below.
 */
export * from './rules/statuses.js';
export { amountInWords, AMOUNT_IN_WORDS_CURRENCIES, type AmountInWordsCurrency } from './rules/amount-in-words.js';
export { DEMO_SHARE_TOKENS } from './read/demo-data.js';
export { DocumentPrints, pdfFilenames } from './read/document-prints.js';
export { documentStatusPort } from './write/status-port.js';
export { markDocumentViewed, markPaymentReported, touchDocument } from './store/portable-status.js';
export { createPostgresInvoiceStore } from './store/postgres.js';
export { createSqliteInvoiceStore } from './store/sqlite.js';
export type { InvoiceStore } from './store/index.js';
export { invoiceRoutes } from './invoice.routes.js';
export { InvoiceDetail, InvoiceWriteResponse } from './invoice.schemas.js';
export { InvoiceService, type Editor, type RequestInfo, type WriteOutcome } from './invoice.service.js';
export {
  toPrintModel,
  type InvoicePrintModel,
  type PrintItem,
  type PrintParty,
  type PrintSeller,
  type PrintSigner,
  type PrintStatus,
  type PrintTotals,
  type PrintVatLine,
} from './read/print-model.js';
export { buildPaymentQrPayload, QrPayloadError } from './rules/qr-payload.js';
export { rotateShareLinks, type RotatedLinks } from './write/share-link-rotation.js';
export { validateInvoice } from './rules/validation.js';
