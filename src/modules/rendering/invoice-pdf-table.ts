/**
 * The items table (№ | Товары (работы, услуги) | Кол-во | Ед. | Цена | Сумма) and the totals
 * under it. A row never splits across pages; the header repeats on every page the table
 * continues on, so a 1000-line invoice reads like the one-page one. The table ends by the page
 * it is given (the PDF's page bound less what follows it): rows beyond are left out, and a
 * line in their place says which, and that the totals count them.
 */
import type { InvoicePrintModel, PrintItem } from '../invoices/index.js';
import { CONTENT_HEIGHT, CONTENT_WIDTH, PAD, PAGE, PDF_MAX_PAGES, SIZE, drawText, ensureRoom, hline, measure, newPage, pageCount, useFont, vline, type Pdf } from './invoice-pdf-layout.js';

interface Column {
  title: string;
  width: number;
  align: 'left' | 'right' | 'center';
  value: (item: PrintItem) => string;
}

/** № fits four digits (1000 lines) at the table size; Сумма fits "999 999 999,99". */
const FIXED = { no: 30, qty: 50, unit: 46, price: 74, amount: 82 };
const NAME_WIDTH = CONTENT_WIDTH - (FIXED.no + FIXED.qty + FIXED.unit + FIXED.price + FIXED.amount);

const COLUMNS: Column[] = [
  { title: '№', width: FIXED.no, align: 'center', value: (i) => String(i.no) },
  { title: 'Товары (работы, услуги)', width: NAME_WIDTH, align: 'left', value: (i) => i.name },
  { title: 'Кол-во', width: FIXED.qty, align: 'right', value: (i) => i.qty },
  { title: 'Ед.', width: FIXED.unit, align: 'left', value: (i) => i.unit },
  { title: 'Цена', width: FIXED.price, align: 'right', value: (i) => i.price },
  { title: 'Сумма', width: FIXED.amount, align: 'right', value: (i) => i.amount },
];

/** Left edge of each column. */
const EDGES = COLUMNS.reduce<number[]>((acc, col, i) => [...acc, (acc[i] ?? PAGE.left) + col.width], [PAGE.left]);

function rowHeight(doc: Pdf, cells: string[], bold: boolean): number {
  let tallest = 0;
  cells.forEach((text, i) => {
    const col = COLUMNS[i] as Column;
    tallest = Math.max(tallest, measure(doc, text, col.width - 2 * PAD, bold, SIZE.table));
  });
  return tallest + 2 * PAD;
}

/** A row's cells are clipped (with an ellipsis) to `height` when they needed more. */
function drawRow(doc: Pdf, y: number, cells: string[], height: number, bold: boolean, header: boolean, clipped = false): void {
  cells.forEach((text, i) => {
    const col = COLUMNS[i] as Column;
    const x = EDGES[i] as number;
    const align = header ? 'center' : col.align;
    drawText(doc, { text, x: x + PAD, y: y + PAD, width: col.width - 2 * PAD, bold, size: SIZE.table, align, ...(clipped ? { height: height - 2 * PAD } : {}) });
  });
  const lineWidth = header ? 0.9 : 0.6;
  hline(doc, PAGE.left, PAGE.right, y, lineWidth);
  hline(doc, PAGE.left, PAGE.right, y + height, lineWidth);
  for (const x of EDGES) vline(doc, x, y, y + height, x === PAGE.left || x === PAGE.right ? 0.9 : 0.6);
}

function drawHeader(doc: Pdf, y: number): number {
  const titles = COLUMNS.map((c) => c.title);
  const height = rowHeight(doc, titles, true);
  drawRow(doc, y, titles, height, true, true);
  return y + height;
}

/** The line that stands for the rows left out: which, and that the totals count them. */
function omittedNote(from: number, to: number): string {
  return `Позиции ${from}–${to} не поместились в печатную форму (не более ${PDF_MAX_PAGES} страниц); итоги ниже учитывают все позиции. Полный перечень — на странице счёта по ссылке.`;
}

/**
 * Draws the table from `y`, breaking pages between rows, on pages up to `lastPage`; returns the
 * cursor below it. A row taller than a page (thousands of short lines in a name) is clipped to
 * one page.
 */
export function drawItemsTable(doc: Pdf, model: InvoicePrintModel, startY: number, lastPage: number): number {
  const headerHeight = rowHeight(doc, COLUMNS.map((c) => c.title), true);
  const total = model.items.length;
  const noteHeight = measure(doc, omittedNote(total, total), CONTENT_WIDTH - 2 * PAD, true, SIZE.table) + 2 * PAD;
  // A row fits under the header on any page, the last one's note included.
  const tallest = CONTENT_HEIGHT - headerHeight - noteHeight;
  let y = startY;
  // Keep the header with at least the first row.
  const first = model.items[0];
  const firstHeight = first ? Math.min(tallest, rowHeight(doc, COLUMNS.map((c) => c.value(first)), false)) : 0;
  if (y + headerHeight + firstHeight > PAGE.bottom) y = newPage(doc);
  y = drawHeader(doc, y);
  for (const [index, item] of model.items.entries()) {
    const cells = COLUMNS.map((c) => c.value(item));
    const needed = rowHeight(doc, cells, false);
    const height = Math.min(needed, tallest);
    // On the last page the note must still fit below any row but the final one.
    const bottom = pageCount(doc) >= lastPage && index < total - 1 ? PAGE.bottom - noteHeight : PAGE.bottom;
    if (y + height > bottom) {
      if (pageCount(doc) >= lastPage) {
        drawText(doc, { text: omittedNote(index + 1, total), x: PAGE.left + PAD, y: y + PAD, width: CONTENT_WIDTH - 2 * PAD, bold: true, size: SIZE.table });
        hline(doc, PAGE.left, PAGE.right, y + noteHeight, 0.9);
        vline(doc, PAGE.left, y, y + noteHeight, 0.9);
        vline(doc, PAGE.right, y, y + noteHeight, 0.9);
        return y + noteHeight;
      }
      y = drawHeader(doc, newPage(doc));
    }
    drawRow(doc, y, cells, height, false, false, height < needed);
    y += height;
  }
  return y;
}

function totalsLineHeight(doc: Pdf): number {
  return measure(doc, 'Итого:', 200, true, SIZE.body) + 2;
}

/** The most pages the totals can start (an upper bound, for the table's page budget). */
export function totalsPages(doc: Pdf, model: InvoicePrintModel): number {
  const lines = model.totals.vat_lines.length + 3;
  return Math.ceil(lines / Math.floor(CONTENT_HEIGHT / totalsLineHeight(doc)));
}

/** "Итого", the VAT lines (or "Без налога (НДС)") and "Всего к оплате", right-aligned under Сумма. */
export function drawTotals(doc: Pdf, model: InvoicePrintModel, startY: number): number {
  const t = model.totals;
  const rows: Array<[string, string]> = [
    ['Итого:', t.items_sum],
    ...t.vat_lines.map((l): [string, string] => [`${l.label}:`, l.amount]),
    ...(t.without_vat ? [['Без налога (НДС)', '-'] as [string, string]] : []),
    ['Всего к оплате:', t.total],
  ];
  const lineHeight = totalsLineHeight(doc);
  // The block stays on one page; only one taller than a page (hundreds of VAT rates) flows on.
  const whole = rows.length * lineHeight <= CONTENT_HEIGHT;
  let y = whole ? ensureRoom(doc, startY + 4, rows.length * lineHeight) : startY + 4;
  // A figure wider than the Сумма column (above ~10^12) extends to the left instead of being
  // clipped: the printed total must be the whole, exact figure.
  useFont(doc, true, SIZE.body);
  const valueWidth = Math.max(FIXED.amount - 2 * PAD, ...rows.map(([, value]) => Math.ceil(doc.widthOfString(value)) + 1));
  const valueX = PAGE.right - PAD - valueWidth;
  const labelWidth = valueX - PAGE.left - 2 * PAD;
  for (const [label, value] of rows) {
    if (!whole) y = ensureRoom(doc, y, lineHeight);
    drawText(doc, { text: label, x: PAGE.left, y, width: labelWidth, bold: true, align: 'right', height: lineHeight });
    drawText(doc, { text: value, x: valueX, y, width: valueWidth, bold: true, align: 'right', height: lineHeight });
    y += lineHeight;
  }
  return y;
}
