/**
 * A PDF has at most PDF_MAX_PAGES (100) pages whatever the document holds within the API's
 * limits (1000 items, names of 1000 characters, texts of 2000): items that would pass it are
 * left out with a line saying which, every other block is clipped to a page, and the totals,
 * the amount in words and the signatures are always printed.
 */
import { describe, expect, it } from 'vitest';
import { renderInvoicePdf } from '../../../src/modules/rendering/invoice-pdf.js';
import { PDF_MAX_PAGES } from '../../../src/modules/rendering/invoice-pdf-layout.js';
import { toPrintModel } from '../../../src/modules/invoices/read/print-model.js';
import { pdfPageCount, pdfText } from './native-tools.js';
import { responseFor, sampleDocument } from './print-fixtures.js';

function itemsNamed(name: (i: number) => string, extra: (i: number) => Record<string, unknown> = () => ({})) {
  return Array.from({ length: 1000 }, (_, i) => ({ name: name(i), qty: 1, unit: 'шт', price: 1, vat_pct: 22, ...extra(i) }));
}

async function rendered(doc: Record<string, unknown>) {
  const model = toPrintModel(responseFor(doc));
  const started = performance.now();
  const pdf = await renderInvoicePdf(model);
  const elapsedMs = performance.now() - started;
  return { model, pdf, elapsedMs, pages: await pdfPageCount(pdf), text: await pdfText(pdf) };
}

describe('the page bound', () => {
  it('leaves out the items past it, says which, and still prints the totals, words and signatures', async () => {
    // The widest letters: 1000 of them wrap to ~39 lines, one item a page.
    const { model, pages, text } = await rendered({ ...sampleDocument(), items: itemsNamed((i) => `${i + 1} ${'Ш'.repeat(990)}`) });
    expect(pages).toBeLessThanOrEqual(PDF_MAX_PAGES);
    expect(pages).toBeGreaterThan(PDF_MAX_PAGES - 12);
    const omitted = /Позиции (\d+)–1000 не поместились в печатную форму \(не более 100 страниц\); итоги ниже учитывают все позиции/.exec(text.replace(/\s+/g, ' '));
    expect(omitted, 'the note on the items left out').not.toBeNull();
    const from = Number(omitted![1]);
    expect(from).toBeGreaterThan(50);
    // The row before the note is printed, the one it names first is not.
    expect(text).toContain(`${from - 1} ШШШ`);
    expect(text).not.toContain(`${from} ШШШ`);
    expect(text).toContain(`Всего к оплате: ${model.totals.total}`);
    expect(text).toContain(model.amount_in_words);
    expect(text).toContain('М.П.');
    expect(text).toContain(`страница ${pages} из ${pages}`);
  }, 60_000);

  it('keeps a document of hostile sizes (thousands of lines in every text, a thousand signers and VAT rates) within it, quickly', async () => {
    const lines = (n: number) => 'строка\n'.repeat(n);
    const doc = {
      ...sampleDocument(),
      seller: { ...(sampleDocument().seller as object), name: lines(70), address: lines(140) },
      buyer: { name: lines(70), inn: '7736207543', address: lines(140) },
      basis: lines(280),
      purpose: lines(280),
      comment: lines(280),
      // Every item a row of 500 lines (taller than a page) at a rate of its own.
      items: itemsNamed((i) => `${i + 1}\n${lines(499)}`, (i) => ({ vat_pct: Number((i / 10).toFixed(1)) })),
      signers: Array.from({ length: 1000 }, (_, i) => ({ role: 'director', name: `Подписант ${i + 1}` })),
    };
    const { model, pages, text, elapsedMs } = await rendered(doc);
    expect(model.totals.vat_lines.length).toBe(1000);
    expect(pages).toBeLessThanOrEqual(PDF_MAX_PAGES);
    expect(text.replace(/\s+/g, ' ')).toMatch(/Позиции \d+–1000 не поместились/);
    expect(text).toContain(`Всего к оплате: ${model.totals.total}`);
    expect(text).toContain('М.П.');
    // Rendered inline on a loaded machine: the bound keeps it near a second, not the minutes
    // tens of thousands of pages took.
    expect(elapsedMs).toBeLessThan(10_000);
  }, 60_000);
});
