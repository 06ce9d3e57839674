/**
 * Rendering: pure, a print model in, bytes out (the PDF print form, QR images). Of other
 * modules it imports only the types it renders (the print model, from invoices).
 */
export { DEFAULT_PDF_ASSETS, renderInvoicePdf, type PdfAssets } from './invoice-pdf.js';
export {
  createPdfRenderer,
  DEFAULT_RENDER_TIMEOUT_MS,
  defaultPdfThreads,
  inlinePdfRenderer,
  pdfPoolOptions,
  RenderQueueFullError,
  RenderTimeoutError,
  type PdfRenderer,
  type RenderLane,
} from './pdf-pool.js';
export { RENDER_BUSY_RETRY_MS } from './render-lanes.js';
export { PDF_MAX_PAGES } from './invoice-pdf-layout.js';
export { RenderCache, renderKey } from './render-cache.js';
export { qrMatrix, renderQrPng, renderQrSvg, type QrMatrix } from './qr-image.js';
