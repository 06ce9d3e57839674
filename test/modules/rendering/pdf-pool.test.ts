/**
 * The PDF pool renders in worker threads exactly what the renderer gives inline, keeps the
 * event loop free meanwhile, and after close falls back to rendering inline.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { renderInvoicePdf } from '../../../src/modules/rendering/invoice-pdf.js';
import { createPdfRenderer } from '../../../src/modules/rendering/pdf-pool.js';
import { toPrintModel } from '../../../src/modules/invoices/print-model.js';
import { sampleResponse } from './print-fixtures.js';

const renderer = createPdfRenderer({ threads: 2 });
afterAll(() => renderer.close());

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
