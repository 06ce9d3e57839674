/**
 * The PDF renderer as a worker-thread task (pdf-pool.ts): the same pure function, so the
 * bytes are the same as rendered inline.
 */
import type { InvoicePrintModel } from '../invoices/index.js';
import { renderInvoicePdf } from './invoice-pdf.js';

export default async function renderTask(model: InvoicePrintModel): Promise<Uint8Array> {
  return renderInvoicePdf(model);
}
