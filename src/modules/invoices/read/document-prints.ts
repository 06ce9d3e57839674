/**
 * A document as it prints now, for the background jobs that send its PDF (an e-mail's
 * attachment, an EDO send): its print model (read/print-model.ts) and the PDF's file names.
 * Built from the invoices store alone, so that the composition root can give it to the
 * notifications and EDO modules when it builds them, before the documents service that needs
 * those two exists (docs/architecture.md, "Attachments").
 *
 * The model is mapped from the response the API answers (`buildInvoiceResponse`), as the share
 * pages map it; the print model reads neither `metadata.notifications` nor `metadata.edo`, so
 * the response here carries the stored e-mail outcome and no EDO state, with no read of them.
 */
import type { Clock } from '../../../shared/clock.js';
import type { LinkBases } from '../../links/index.js';
import type { AuthContext } from '../../teams/index.js';
import { storedNotifications } from '../model/document-row.js';
import type { InvoiceStore } from '../store/index.js';
import { buildInvoiceResponse } from '../view/invoice-view.js';
import { viewContextFor } from '../view/view-context.js';
import { toPrintModel, type InvoicePrintModel } from './print-model.js';

/**
 * The PDF's file names: "Счёт № 15 от 02.03.2026.pdf" for browsers that read `filename*`, and
 * an ASCII fallback "invoice-15-2026-03-02.pdf". Characters that could break the header or a
 * file system (quotes, slashes, control characters) reach neither.
 */
export function pdfFilenames(model: InvoicePrintModel): { name: string; ascii: string } {
  const clean = (s: string) =>
    s
      .replace(/[\u0000-\u001f\u007f-\u009f"\\/:*?<>|]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 80);
  const number = clean(model.number);
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(model.date);
  const name = `Счёт${number ? ` № ${number}` : ''}${date ? ` от ${date[3]}.${date[2]}.${date[1]}` : ''}.pdf`;
  const asciiNumber = number.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 40).replace(/^-+|-+$/g, '');
  const ascii = ['invoice', asciiNumber, date ? date[0] : ''].filter(Boolean).join('-') + '.pdf';
  return { name, ascii };
}

export class DocumentPrints {
  constructor(private readonly deps: { store: InvoiceStore; bases: LinkBases; clock: Clock }) {}

  /** The document's print model now, with its revision; null when the team has no such document. */
  async current(auth: Extract<AuthContext, { mode: 'live' }>, publicId: string, requestId: string): Promise<{ revision: number; model: InvoicePrintModel } | null> {
    const { row, links } = await this.deps.store.findWithLinks(auth.teamId, publicId);
    if (!row) return null;
    const ctx = viewContextFor(this.deps.bases, this.deps.clock, auth, { host: '', requestId }, storedNotifications(row), null);
    return { revision: row.revision, model: toPrintModel(buildInvoiceResponse(row, links, ctx)) };
  }
}
