/**
 * Where invoice PDFs are rendered: a small pool of worker threads (piscina), so the ~60 ms of
 * CPU a PDF takes (pdfkit subsetting the fonts) never holds the event loop that serves
 * requests, or, with `threads: 0`, inline. The renderer is the same pure function either way.
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { renderInvoicePdf } from './invoice-pdf.js';
import type { InvoicePrintModel } from '../invoices/index.js';
import { endSpan, SPAN, startSpan } from '../../shared/tracing.js';

/** The render queue is full: the caller answers 503 with Retry-After. */
export class RenderQueueFullError extends Error {
  constructor() {
    super('the PDF render queue is full');
    this.name = 'RenderQueueFullError';
  }
}

export interface PdfRenderer {
  render(model: InvoicePrintModel): Promise<Buffer>;
  /** Ends the threads; renders asked for afterwards run inline. */
  close(): Promise<void>;
}

/** Renders on the calling thread (tools, tests of the renderer). */
export const inlinePdfRenderer: PdfRenderer = {
  render: (model) => renderInvoicePdf(model),
  close: async () => undefined,
};

/** One thread per spare core, at least one, at most four. */
export function defaultPdfThreads(): number {
  return Math.max(1, Math.min(4, os.availableParallelism() - 1));
}

/**
 * `maxQueue` bounds the renders waiting for a thread (INVOICING_PDF_QUEUE_MAX): with every
 * thread busy and that many waiting, `render` fails at once with RenderQueueFullError.
 */
export function createPdfRenderer(options: { threads?: number; maxQueue?: number } = {}): PdfRenderer {
  const threads = options.threads ?? defaultPdfThreads();
  if (threads <= 0) return inlinePdfRenderer;
  const capacity = threads + (options.maxQueue ?? Number.POSITIVE_INFINITY);
  let pending = 0;
  // From the build the worker is JavaScript; from the sources (tsx, vitest) it is TypeScript,
  // loaded in the thread through tsx like the rest of the sources.
  const fromSources = import.meta.url.endsWith('.ts');
  const filename = fileURLToPath(new URL(fromSources ? './pdf-worker.ts' : './pdf-worker.js', import.meta.url));
  let pool: Piscina | null = new Piscina({
    filename,
    minThreads: 0,
    maxThreads: threads,
    // Threads start on the first PDF and end after a minute without one.
    idleTimeout: 60_000,
    ...(fromSources ? { execArgv: ['--import', 'tsx'] } : {}),
  });
  return {
    async render(model) {
      if (!pool) return renderInvoicePdf(model);
      if (pending >= capacity) throw new RenderQueueFullError();
      pending += 1;
      // The span covers the wait for a thread and the render: a slow PDF shows which it was by its length and the queue.
      const span = startSpan(SPAN.pdfRender, { 'invoicing.pdf_queue': pending });
      try {
        const bytes = (await pool.run(model)) as Uint8Array;
        endSpan(span);
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      } catch (err) {
        endSpan(span, err);
        throw err;
      } finally {
        pending -= 1;
      }
    },
    async close() {
      const closing = pool;
      pool = null;
      await closing?.destroy();
    },
  };
}
