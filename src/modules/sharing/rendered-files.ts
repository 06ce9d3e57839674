/**
 * The files the share and portal routes serve (PDFs, QR images) and the PDF's file names.
 */

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

/** The PDF's file names, as the invoices module names a document's PDF. */
export { pdfFilenames } from '../invoices/index.js';
