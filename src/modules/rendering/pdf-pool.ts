/**
 * Where invoice PDFs are rendered: a small pool of worker threads (piscina), so the ~60 ms of
 * CPU a PDF takes (pdfkit subsetting the fonts) never holds the event loop that serves
 * requests, or, with `threads: 0`, inline. The renderer is the same pure function either way.
 *
 * Bounds (docs/security.md, "PDF renders are bounded"): renders wait for a thread in two lanes
 * with queues of their own (render-lanes.ts), and a render that runs longer than `timeoutMs`
 * is stopped by ending its thread (piscina starts another for the next render) and fails with
 * RenderTimeoutError. The page bound of the layout (PDF_MAX_PAGES) keeps any document within
 * the API's limits near a second; the timeout is the backstop for whatever the layout misses.
 */
import os from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { renderInvoicePdf } from './invoice-pdf.js';
import { RenderLanes, type RenderLane } from './render-lanes.js';
import type { RenderTask } from './pdf-worker.js';
import type { InvoicePrintModel } from '../invoices/index.js';
import { endSpan, SPAN, startSpan } from '../../shared/tracing.js';

export { RenderQueueFullError, type RenderLane } from './render-lanes.js';

/** Default of INVOICING_PDF_RENDER_TIMEOUT_MS. */
export const DEFAULT_RENDER_TIMEOUT_MS = 5_000;
/**
 * Allowed on top of the timeout for a thread to start (load pdfkit and the fonts: ~0.3 s from
 * the build, more through tsx) before it reports the render begun; the timeout counts from then.
 */
const THREAD_START_MS = 10_000;

/** A render ran past the timeout and was stopped: the caller answers 503, a job counts a failed attempt. */
export class RenderTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the PDF took longer than ${timeoutMs} ms to render and was stopped`);
    this.name = 'RenderTimeoutError';
  }
}

export interface PdfRenderer {
  /** `lane`: `public` (share and portal routes, the default) or `background` (e-mail, EDO). */
  render(model: InvoicePrintModel, lane?: RenderLane): Promise<Buffer>;
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

export interface PdfPoolOptions {
  threads?: number;
  /** INVOICING_PDF_QUEUE_MAX: public renders waiting for a thread; unbounded by default. */
  maxQueue?: number;
  /** INVOICING_PDF_BACKGROUND_QUEUE_MAX: background renders waiting for a thread; unbounded by default. */
  maxBackgroundQueue?: number;
  /** INVOICING_PDF_RENDER_TIMEOUT_MS. */
  timeoutMs?: number;
  /** The thread's task module (pdf-worker's contract); tests give one that can be made slow. */
  taskFile?: URL;
}

/** The pool's bounds as configured (INVOICING_PDF_*). */
export function pdfPoolOptions(config: { limits: { pdfQueueMax: number; pdfBackgroundQueueMax: number; pdfRenderTimeoutMs: number } }): PdfPoolOptions {
  const { pdfQueueMax, pdfBackgroundQueueMax, pdfRenderTimeoutMs } = config.limits;
  return { maxQueue: pdfQueueMax, maxBackgroundQueue: pdfBackgroundQueueMax, timeoutMs: pdfRenderTimeoutMs };
}

/**
 * With every thread busy and a lane's queue full, `render` in that lane fails at once with
 * RenderQueueFullError.
 */
export function createPdfRenderer(options: PdfPoolOptions = {}): PdfRenderer {
  const threads = options.threads ?? defaultPdfThreads();
  if (threads <= 0) return inlinePdfRenderer;
  const timeoutMs = options.timeoutMs ?? DEFAULT_RENDER_TIMEOUT_MS;
  const lanes = new RenderLanes(threads, {
    public: options.maxQueue ?? Number.POSITIVE_INFINITY,
    background: options.maxBackgroundQueue ?? Number.POSITIVE_INFINITY,
  });
  // From the build the worker is JavaScript; from the sources (tsx, vitest) it is TypeScript,
  // loaded in the thread through tsx like the rest of the sources.
  const fromSources = import.meta.url.endsWith('.ts');
  const taskFile = options.taskFile ?? new URL(fromSources ? './pdf-worker.ts' : './pdf-worker.js', import.meta.url);
  let pool: Piscina | null = new Piscina({
    filename: fileURLToPath(taskFile),
    minThreads: 0,
    maxThreads: threads,
    // Threads start on the first PDF and end after a minute without one.
    idleTimeout: 60_000,
    ...(taskFile.pathname.endsWith('.ts') ? { execArgv: ['--import', 'tsx'] } : {}),
  });

  /** Runs one render on a thread, stopped (its thread ended) once it runs past the timeout. */
  async function runBounded(running: Piscina, model: InvoicePrintModel): Promise<Buffer> {
    const abort = new AbortController();
    const { port1, port2 } = new MessageChannel();
    let timer = setTimeout(() => abort.abort(), THREAD_START_MS + timeoutMs);
    port1.once('message', () => {
      clearTimeout(timer);
      timer = setTimeout(() => abort.abort(), timeoutMs);
    });
    try {
      const task: RenderTask = { model, started: port2 };
      const bytes = (await running.run(task, { transferList: [port2], signal: abort.signal })) as Uint8Array;
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (err) {
      if (abort.signal.aborted) throw new RenderTimeoutError(timeoutMs);
      throw err;
    } finally {
      clearTimeout(timer);
      port1.close();
    }
  }

  return {
    async render(model, lane = 'public') {
      if (!pool) return renderInvoicePdf(model);
      // The span covers the wait for a thread and the render: a slow PDF shows which it was by its length.
      const span = startSpan(SPAN.pdfRender, { 'invoicing.pdf_lane': lane });
      await lanes.acquire(lane).catch((err: unknown) => {
        endSpan(span, err);
        throw err;
      });
      try {
        const running = pool;
        const bytes = running ? await runBounded(running, model) : await renderInvoicePdf(model);
        endSpan(span);
        return bytes;
      } catch (err) {
        endSpan(span, err);
        throw err;
      } finally {
        lanes.release();
      }
    },
    async close() {
      const closing = pool;
      pool = null;
      await closing?.destroy();
    },
  };
}
