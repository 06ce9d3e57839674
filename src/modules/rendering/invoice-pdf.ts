/**
 * The printable "Счёт на оплату" in the usual Russian layout (domain reference, print form):
 * bank block laid out like a payment order, title over a thick rule, supplier and buyer,
 * the items table, totals, the amount in words, signers with "М.П." and the payment QR.
 *
 * Pure (convention 12): print model in, bytes out. No clock, database or network: the fonts
 * are read from the `dejavu-fonts-ttf` package once at module load, and the output is
 * deterministic. pdfkit would stamp `new Date()` as CreationDate and derive the file ID from
 * the info dictionary, so both are fixed here by setting CreationDate to the document date;
 * its font subset tags are derived from font ids, not random. Same model, same bytes.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import PDFDocument from 'pdfkit';
import type { InvoicePrintModel, PrintParty } from '../invoices/index.js';
import { CONTENT_HEIGHT, CONTENT_WIDTH, FONT, PAGE, PDF_MAX_PAGES, SIZE, box, drawText, ensureRoom, hline, measure, newPage, vline, type Pdf } from './invoice-pdf-layout.js';
import { drawItemsTable, drawTotals, totalsPages } from './invoice-pdf-table.js';
import { qrMatrix } from './qr-image.js';

export interface PdfAssets {
  regularFont: Buffer;
  boldFont: Buffer;
}

const require = createRequire(import.meta.url);

/** DejaVu Sans covers Cyrillic, «» and №; shipped through npm, never fetched. */
export const DEFAULT_PDF_ASSETS: PdfAssets = {
  regularFont: readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')),
  boldFont: readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf')),
};

/** 130 pt: about 0.55 mm a module for a typical payload, comfortably above what phone cameras need. */
const QR_SIZE = 130;

/** Midnight UTC of the document date: a stable CreationDate (and so a stable file ID). */
function documentInstant(isoDate: string): Date {
  const parsed = /^\d{4}-\d{2}-\d{2}$/.test(isoDate) ? new Date(`${isoDate}T00:00:00.000Z`) : new Date(NaN);
  return Number.isNaN(parsed.getTime()) ? new Date(Date.UTC(2000, 0, 1)) : parsed;
}

/** Bank block: Банк получателя | БИК / Сч. №; ИНН | КПП | Сч. №; Получатель. */
function drawBankBlock(doc: Pdf, model: InvoicePrintModel, top: number): number {
  const s = model.seller;
  const innWidth = 128;
  const kppWidth = 128;
  const labelWidth = 48;
  const xKpp = PAGE.left + innWidth;
  const xLabel = xKpp + kppWidth;
  const xValue = xLabel + labelWidth;
  const valueWidth = PAGE.right - xValue;
  const leftWidth = innWidth + kppWidth;
  const line = measure(doc, 'Ag', 100);
  const caption = measure(doc, 'Ag', 100, false, SIZE.small);

  const bankHeight = Math.max(2 * line + 6, Math.min(measure(doc, s.bank_name, leftWidth - 6), 3 * line) + caption + 6);
  const innHeight = line + 4;
  const payeeHeight = Math.max(2 * line + 6, Math.min(measure(doc, s.name, leftWidth - 6), 3 * line) + caption + 6);
  const y1 = top + bankHeight;
  const y2 = y1 + innHeight;
  const bottom = y2 + payeeHeight;
  const bikRow = line + 4;

  drawText(doc, { text: s.bank_name, x: PAGE.left + 3, y: top + 3, width: leftWidth - 6, height: bankHeight - caption - 6 });
  drawText(doc, { text: 'Банк получателя', x: PAGE.left + 3, y: y1 - caption - 2, width: leftWidth - 6, size: SIZE.small });
  drawText(doc, { text: 'БИК', x: xLabel + 3, y: top + 2, width: labelWidth - 6 });
  drawText(doc, { text: s.bik, x: xValue + 3, y: top + 2, width: valueWidth - 6, height: line });
  drawText(doc, { text: 'Сч. №', x: xLabel + 3, y: top + bikRow + 2, width: labelWidth - 6 });
  drawText(doc, { text: s.corr_account, x: xValue + 3, y: top + bikRow + 2, width: valueWidth - 6, height: line });
  drawText(doc, { text: `ИНН ${s.inn}`, x: PAGE.left + 3, y: y1 + 2, width: innWidth - 6, height: line });
  drawText(doc, { text: `КПП ${s.kpp}`, x: xKpp + 3, y: y1 + 2, width: kppWidth - 6, height: line });
  drawText(doc, { text: 'Сч. №', x: xLabel + 3, y: y1 + 2, width: labelWidth - 6 });
  drawText(doc, { text: s.account, x: xValue + 3, y: y1 + 2, width: valueWidth - 6, height: line });
  drawText(doc, { text: s.name, x: PAGE.left + 3, y: y2 + 3, width: leftWidth - 6, height: payeeHeight - caption - 6 });
  drawText(doc, { text: 'Получатель', x: PAGE.left + 3, y: bottom - caption - 2, width: leftWidth - 6, size: SIZE.small });

  box(doc, PAGE.left, top, CONTENT_WIDTH, bottom - top);
  hline(doc, PAGE.left, PAGE.right, y1);
  hline(doc, PAGE.left, xLabel, y2);
  hline(doc, xLabel, PAGE.right, top + bikRow);
  vline(doc, xKpp, y1, y2);
  vline(doc, xLabel, top, bottom);
  vline(doc, xValue, top, bottom);
  return bottom;
}

function partyLine(p: PrintParty): string {
  return [p.name, p.inn && `ИНН ${p.inn}`, p.kpp && `КПП ${p.kpp}`, p.address].filter((part) => part !== '').join(', ');
}

/** A labelled paragraph ("Поставщик (Исполнитель):" + bold value), at most a page; returns the cursor below. */
function drawLabelled(doc: Pdf, y: number, label: string, value: string): number {
  const labelWidth = 92;
  const valueWidth = CONTENT_WIDTH - labelWidth;
  const height = Math.min(CONTENT_HEIGHT, Math.max(measure(doc, label, labelWidth - 4), measure(doc, value, valueWidth, true)) + 6);
  const at = ensureRoom(doc, y, height);
  drawText(doc, { text: label, x: PAGE.left, y: at, width: labelWidth - 4 });
  drawText(doc, { text: value, x: PAGE.left + labelWidth, y: at, width: valueWidth, bold: true });
  return at + height;
}

/** Draws the QR as filled rectangles (one per run of dark modules): crisp at any print size. */
function drawQr(doc: Pdf, payload: string, x: number, y: number, size: number): void {
  const m = qrMatrix(payload);
  const module = size / (m.size + 2 * m.quietZone);
  const origin = { x: x + m.quietZone * module, y: y + m.quietZone * module };
  doc.save().fillColor('#000000');
  for (let row = 0; row < m.size; row++) {
    let col = 0;
    while (col < m.size) {
      if (!m.isDark(row, col)) {
        col++;
        continue;
      }
      const start = col;
      while (col < m.size && m.isDark(row, col)) col++;
      doc.rect(origin.x + start * module, origin.y + row * module, (col - start) * module, module);
    }
  }
  doc.fill().restore();
}

/** Signature lines ("Руководитель ____ Name"), "М.П." and the QR beside them; as many signers as a page holds. */
function drawSignatures(doc: Pdf, model: InvoicePrintModel, startY: number): number {
  const qr = model.qr_payload;
  const line = measure(doc, 'Ag', 100);
  const signerHeight = 2 * line + 10;
  const signers = model.signers.slice(0, Math.floor((CONTENT_HEIGHT - line - 8) / signerHeight));
  const blockHeight = Math.max(signers.length * signerHeight + line + 8, qr ? QR_SIZE + line + 4 : 0);
  let y = ensureRoom(doc, startY + 10, blockHeight);
  const top = y;
  const labelWidth = 112;
  const ruleWidth = 110;
  const xRule = PAGE.left + labelWidth;
  const xName = xRule + ruleWidth + 8;
  // The name line stops short of the QR when there is one.
  const nameWidth = Math.min(170, (qr ? PAGE.right - QR_SIZE - 10 : PAGE.right) - xName);
  for (const signer of signers) {
    drawText(doc, { text: signer.label, x: PAGE.left, y: y + line, width: labelWidth - 4, bold: true });
    hline(doc, xRule, xRule + ruleWidth, y + 2 * line + 1);
    drawText(doc, { text: signer.name, x: xName, y: y + line, width: nameWidth, height: line });
    hline(doc, xName, xName + nameWidth, y + 2 * line + 1);
    drawText(doc, { text: 'подпись', x: xRule, y: y + 2 * line + 2, width: ruleWidth, size: SIZE.small, align: 'center', height: line });
    const caption = signer.position || 'расшифровка подписи';
    drawText(doc, { text: caption, x: xName, y: y + 2 * line + 2, width: nameWidth, size: SIZE.small, align: 'center', height: line });
    y += signerHeight;
  }
  drawText(doc, { text: 'М.П.', x: PAGE.left + 40, y: y + 4, width: 60 });
  if (qr) {
    const x = PAGE.right - QR_SIZE;
    drawQr(doc, qr, x, top, QR_SIZE);
    drawText(doc, { text: 'QR-код для оплаты', x, y: top + QR_SIZE, width: QR_SIZE, size: SIZE.small, align: 'center' });
  }
  return top + blockHeight;
}

/** "Страница N из M" in the bottom margin of every page of a multi-page document. */
function numberPages(doc: Pdf, title: string): void {
  const range = doc.bufferedPageRange();
  if (range.count < 2) return;
  for (let i = 0; i < range.count; i++) {
    doc.switchToPage(range.start + i);
    // Writing below the bottom margin would make pdfkit start a page; lift the margin meanwhile.
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    drawText(doc, { text: `${title} — страница ${i + 1} из ${range.count}`, x: PAGE.left, y: PAGE.bottom + 14, width: CONTENT_WIDTH, size: SIZE.small, align: 'right', height: 12 });
    doc.page.margins.bottom = bottom;
  }
}

/**
 * A paid or cancelled invoice is stamped «Оплачен» / «Отменён» in a framed box above the
 * title, with a line saying not to pay; it prints no payment QR (the API disables it).
 */
const SETTLED_NOTES: Record<string, string> = {
  paid: 'Счёт оплачен, повторно оплачивать его не нужно.',
  cancelled: 'Счёт отменён продавцом, оплачивать его не нужно.',
};

function drawSettledStamp(doc: Pdf, model: InvoicePrintModel, y: number): number {
  const note = SETTLED_NOTES[model.status.seller];
  if (note === undefined) return y;
  const label = model.status.seller_label || (model.status.seller === 'paid' ? 'Оплачен' : 'Отменён');
  const stampWidth = 120;
  const stampHeight = measure(doc, label, stampWidth, true, SIZE.title) + 8;
  doc.save().lineWidth(1.5).strokeColor('#b00020').rect(PAGE.left, y, stampWidth, stampHeight).stroke().restore();
  drawText(doc, { text: label, x: PAGE.left, y: y + 4, width: stampWidth, bold: true, size: SIZE.title, align: 'center' });
  drawText(doc, { text: note, x: PAGE.left + stampWidth + 10, y: y + 4, width: CONTENT_WIDTH - stampWidth - 10, bold: true });
  return y + stampHeight + 8;
}

function drawDocument(doc: Pdf, model: InvoicePrintModel): void {
  let y: number = drawSettledStamp(doc, model, PAGE.top);
  if (model.due_date_text) {
    drawText(doc, { text: `Счёт действителен к оплате до ${model.due_date_text}.`, x: PAGE.left, y, width: CONTENT_WIDTH, size: SIZE.small });
    y += measure(doc, 'Ag', 100, false, SIZE.small) + 6;
  }
  y = drawBankBlock(doc, model, y) + 16;
  const titleHeight = Math.min(measure(doc, model.title, CONTENT_WIDTH, true, SIZE.title), PAGE.bottom - y);
  drawText(doc, { text: model.title, x: PAGE.left, y, width: CONTENT_WIDTH, bold: true, size: SIZE.title });
  y += titleHeight + 4;
  hline(doc, PAGE.left, PAGE.right, y, 2);
  y += 8;
  y = drawLabelled(doc, y, 'Поставщик\n(Исполнитель):', partyLine(model.seller));
  y = drawLabelled(doc, y, 'Покупатель\n(Заказчик):', partyLine(model.buyer));
  if (model.basis) y = drawLabelled(doc, y, 'Основание:', model.basis);

  const paragraphs: Array<{ text: string; bold: boolean }> = [
    { text: model.summary, bold: false },
    { text: model.amount_in_words, bold: true },
    ...(model.purpose ? [{ text: `Назначение платежа: ${model.purpose}`, bold: false }] : []),
    ...(model.comment ? [{ text: model.comment, bold: false }] : []),
  ];
  // What follows the table starts at most this many pages: the totals', one per paragraph (each
  // at most a page), the closing rule's and the signatures'. The table keeps to the rest.
  const pagesAfterTable = totalsPages(doc, model) + paragraphs.length + 2;
  y = drawItemsTable(doc, model, y + 6, PDF_MAX_PAGES - pagesAfterTable);
  y = drawTotals(doc, model, y);
  y += 8;
  for (const p of paragraphs) {
    const height = Math.min(CONTENT_HEIGHT, measure(doc, p.text, CONTENT_WIDTH, p.bold) + 2);
    y = ensureRoom(doc, y, height);
    drawText(doc, { text: p.text, x: PAGE.left, y, width: CONTENT_WIDTH, bold: p.bold });
    y += height;
  }
  y = ensureRoom(doc, y + 4, 4);
  hline(doc, PAGE.left, PAGE.right, y, 2);
  drawSignatures(doc, model, y);
}

/**
 * Renders the invoice to PDF bytes. Deterministic: equal models give byte-identical output.
 * `assets` defaults to the bundled DejaVu Sans; tests or a deployment may pass their own.
 */
export function renderInvoicePdf(model: InvoicePrintModel, assets: PdfAssets = DEFAULT_PDF_ASSETS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      size: 'A4',
      margins: { top: PAGE.top, bottom: PAGE.height - PAGE.bottom, left: PAGE.left, right: PAGE.width - PAGE.right },
      autoFirstPage: false,
      bufferPages: true,
      compress: true,
      lang: 'ru-RU',
      displayTitle: true,
      info: {
        Title: model.title,
        Author: model.seller.name,
        Subject: 'Счёт на оплату',
        Creator: 'invoicing',
        Producer: 'invoicing (PDFKit)',
        CreationDate: documentInstant(model.date),
      },
    });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    try {
      doc.registerFont(FONT.regular, assets.regularFont);
      doc.registerFont(FONT.bold, assets.boldFont);
      newPage(doc);
      drawDocument(doc, model);
      numberPages(doc, model.title);
      doc.end();
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
