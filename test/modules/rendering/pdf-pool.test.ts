/**
 * The PDF pool renders in worker threads exactly what the renderer gives inline, keeps the
 * event loop free meanwhile, and after close falls back to rendering inline. Its bounds: a
 * render past the timeout is stopped (its thread ended) and the pool goes on serving; each
 * lane has a queue of its own, so public renders that fill theirs never refuse a background one.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { renderInvoicePdf } from '../../../src/modules/rendering/invoice-pdf.js';
import { createPdfRenderer, RenderQueueFullError, RenderTimeoutError } from '../../../src/modules/rendering/pdf-pool.js';
import { toPrintModel } from '../../../src/modules/invoices/read/print-model.js';
import { responseFor, sampleDocument, sampleResponse } from './print-fixtures.js';

const renderer = createPdfRenderer({ threads: 2 });
afterAll(() => renderer.close());

const SLOW_TASK = new URL('./slow-pdf-worker.ts', import.meta.url);
/** The sample, made to hold its thread `ms` after rendering (slow-pdf-worker.ts). */
const slowModel = (ms: number) => toPrintModel(responseFor({ ...sampleDocument(), number: `slow:${ms}` }));

describe('the PDF pool', () => {
  it('renders byte-identical PDFs in worker threads', async () => {
    const model = toPrintModel(sampleResponse());
    const [pooled, inline] = await Promise.all([renderer.render(model), renderInvoicePdf(model)]);
    expect(pooled.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(Buffer.compare(pooled, inline)).toBe(0);
  });

  it('leaves the event loop free while it renders', async () => {
    const model = toPrintModel(sampleResponse());
    await renderer.render(model); // threads started
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    await Promise.all(Array.from({ length: 6 }, () => renderer.render(model)));
    clearInterval(timer);
    // Six renders take well over 100 ms of CPU; on the event loop no 1 ms timer could fire meanwhile.
    expect(ticks).toBeGreaterThan(20);
  });

  it('renders inline after close', async () => {
    const model = toPrintModel(sampleResponse());
    const own = createPdfRenderer({ threads: 1 });
    await own.close();
    expect(Buffer.compare(await own.render(model), await renderInvoicePdf(model))).toBe(0);
  });
});

describe('the render timeout', () => {
  it('stops a render that runs past it, and the pool goes on serving', async () => {
    const pool = createPdfRenderer({ threads: 1, timeoutMs: 1_000, taskFile: SLOW_TASK });
    try {
      const model = toPrintModel(sampleResponse());
      // The thread's start (tsx, fonts) is not counted: the first render is not refused for it.
      expect((await pool.render(model)).subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const started = performance.now();
      const stuck = pool.render(slowModel(60_000));
      // Waiting behind it in its lane: served once the stuck render is stopped.
      const next = pool.render(model, 'background');
      await expect(stuck).rejects.toBeInstanceOf(RenderTimeoutError);
      const stoppedAfter = performance.now() - started;
      expect(stoppedAfter).toBeGreaterThanOrEqual(950);
      expect(stoppedAfter).toBeLessThan(8_000);
      expect(Buffer.compare(await next, await renderInvoicePdf(model))).toBe(0);
      expect(Buffer.compare(await pool.render(model), await renderInvoicePdf(model))).toBe(0);
    } finally {
      await pool.close();
    }
  }, 60_000);
});

describe('the render lanes', () => {
  it('refuse a public render when the public queue is full, and still take background renders', async () => {
    const pool = createPdfRenderer({ threads: 1, maxQueue: 1, maxBackgroundQueue: 1, timeoutMs: 30_000, taskFile: SLOW_TASK });
    try {
      const model = toPrintModel(sampleResponse());
      await pool.render(model);
      // One public render holds the thread, one waits: the public queue is full.
      const holding = pool.render(slowModel(1_500));
      const waiting = pool.render(model);
      await expect(pool.render(model)).rejects.toBeInstanceOf(RenderQueueFullError);
      const background = pool.render(model, 'background');
      // The background queue has a bound of its own.
      const refused = await pool.render(model, 'background').catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(RenderQueueFullError);
      expect((refused as RenderQueueFullError).lane).toBe('background');
      expect((refused as RenderQueueFullError).retryAfterMs).toBe(2_000);
      const order: string[] = [];
      await Promise.all([
        holding.then(() => order.push('holding')),
        waiting.then(() => order.push('public')),
        background.then(() => order.push('background')),
      ]);
      // The freed thread went to the background lane first (it was its turn), then to the public one.
      expect(order).toEqual(['holding', 'background', 'public']);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
