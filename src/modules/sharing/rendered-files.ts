/**
 * The files the share and portal routes serve (PDFs, QR images) and the PDF's file names.
 */
import type { InvoicePrintModel } from '../invoices/index.js';

export interface BinaryFile {
  body: Buffer;
  /** The file name to offer (UTF-8) and its ASCII fallback. */
  filename: { name: string; ascii: string };
}

/**
 * A PDF or QR image as the routes serve it: its strong ETag (the hash of everything it is
 * rendered from, read from the database on this request) is known before any rendering, so
 * `If-None-Match` is answered with 304 without rendering; `load` renders or takes it from the
 * cache.
 */
export interface RenderedFile {
  etag: string;
  filename?: { name: string; ascii: string };
  load(): Promise<Buffer>;
}

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
