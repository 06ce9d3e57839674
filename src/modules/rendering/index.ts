/**
 * Rendering: pure, a print model in, bytes out (the PDF print form, QR images). Of other
 * modules it imports only the types it renders (the print model, from invoices).
 */
export { DEFAULT_PDF_ASSETS, renderInvoicePdf, type PdfAssets } from './invoice-pdf.js';
export { createPdfRenderer, defaultPdfThreads, inlinePdfRenderer, RenderQueueFullError, type PdfRenderer } from './pdf-pool.js';
export { RenderCache, renderKey } from './render-cache.js';
export { qrMatrix, renderQrPng, renderQrSvg, type QrMatrix } from './qr-image.js';
