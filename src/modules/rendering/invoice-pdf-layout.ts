/**
 * Geometry and drawing primitives shared by the parts of the invoice PDF. The renderer keeps
 * its own cursor and breaks pages itself: pdfkit's automatic page flow would split a table
 * row or a totals block in the middle, and a print form must not.
 */
import type PDFDocument from 'pdfkit';

export type Pdf = InstanceType<typeof PDFDocument>;

/** Font aliases registered on every document (DejaVu Sans, bundled through npm). */
export const FONT = { regular: 'DejaVuSans', bold: 'DejaVuSans-Bold' } as const;

/** A4 in points with 15 mm side margins and 12.7 mm top and bottom. */
export const PAGE = {
  width: 595.28,
  height: 841.89,
  left: 42.5,
  right: 595.28 - 42.5,
  top: 36,
  bottom: 841.89 - 40,
} as const;
export const CONTENT_WIDTH = PAGE.right - PAGE.left;
/** The height between the top and bottom margins: no block of the form is taller. */
export const CONTENT_HEIGHT = PAGE.bottom - PAGE.top;

/**
 * The most pages a PDF has. The contract's largest document, 1000 items, takes 22 pages with
 * one-line names and about 60 with four-line ones; 100 holds 1000 names of about 280
 * characters each, and renders in well under a second. Items that would pass it are left out
 * of the table with a line saying which (invoice-pdf-table.ts); every other block is clipped
 * to one page, so nothing else can push the count past it.
 */
export const PDF_MAX_PAGES = 100;

export const SIZE = { body: 9, small: 7, table: 8.5, title: 13 } as const;
/** Inner padding of table cells. */
export const PAD = 3;

export interface CellText {
  text: string;
  x: number;
  y: number;
  width: number;
  bold?: boolean;
  size?: number;
  align?: 'left' | 'right' | 'center';
  /** Clip to this height with an ellipsis (bank-block cells have a fixed size). */
  height?: number;
}

/** Sets the font and size used by the next measure or draw. */
export function useFont(doc: Pdf, bold: boolean, size: number): void {
  doc.font(bold ? FONT.bold : FONT.regular).fontSize(size);
}

/** Height of wrapped text in `width`, with the given font. */
export function measure(doc: Pdf, text: string, width: number, bold = false, size: number = SIZE.body): number {
  useFont(doc, bold, size);
  return text === '' ? doc.currentLineHeight(true) : doc.heightOfString(text, { width });
}

/**
 * Draws wrapped text at an absolute position. Callers have measured and made room first;
 * `height` clips a fixed-size cell with an ellipsis, and without it the text is clipped at the
 * bottom margin: pdfkit never adds a page on its own (a field of thousands of short lines
 * would otherwise run on over as many pages).
 */
export function drawText(doc: Pdf, cell: CellText): void {
  if (cell.text === '') return;
  const height = cell.height ?? PAGE.bottom - cell.y;
  if (height <= 0) return;
  useFont(doc, cell.bold === true, cell.size ?? SIZE.body);
  doc.fillColor('#000000').text(cell.text, cell.x, cell.y, { width: cell.width, align: cell.align ?? 'left', lineGap: 0, height, ellipsis: true });
}

export function hline(doc: Pdf, x1: number, x2: number, y: number, width = 0.6): void {
  doc.save().lineWidth(width).strokeColor('#000000').moveTo(x1, y).lineTo(x2, y).stroke().restore();
}

export function vline(doc: Pdf, x: number, y1: number, y2: number, width = 0.6): void {
  doc.save().lineWidth(width).strokeColor('#000000').moveTo(x, y1).lineTo(x, y2).stroke().restore();
}

export function box(doc: Pdf, x: number, y: number, w: number, h: number, width = 0.6): void {
  doc.save().lineWidth(width).strokeColor('#000000').rect(x, y, w, h).stroke().restore();
}

/** Pages so far. */
export function pageCount(doc: Pdf): number {
  return doc.bufferedPageRange().count;
}

/** Starts a new page and returns the cursor at its top. */
export function newPage(doc: Pdf): number {
  doc.addPage({ size: 'A4', margins: { top: PAGE.top, bottom: PAGE.height - PAGE.bottom, left: PAGE.left, right: PAGE.width - PAGE.right } });
  return PAGE.top;
}

/** The cursor unchanged when `height` fits above the bottom margin, otherwise the top of a new page. */
export function ensureRoom(doc: Pdf, y: number, height: number): number {
  return y + height <= PAGE.bottom ? y : newPage(doc);
}
