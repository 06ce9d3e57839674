import { describe, expect, it } from 'vitest';
import { buildPaymentQrPayload } from '../../../src/modules/invoices/rules/qr-payload.js';
import { qrMatrix, renderQrPng, renderQrSvg } from '../../../src/modules/rendering/qr-image.js';
import iconv from 'iconv-lite';
import { decodeQrPng, decodeQrPngBytes } from './native-tools.js';
import { EXPECTED_QR_PAYLOAD } from './print-fixtures.js';

/** The domain reference's example payload, built by the payload builder. */
const REFERENCE_PAYLOAD = buildPaymentQrPayload({
  name: 'ООО «Три кита»',
  personalAcc: '40702810138250123017',
  bankName: 'ПАО СБЕРБАНК',
  bic: '044525225',
  correspAcc: '30101810400000000225',
  payeeInn: '7701234560',
  kpp: '770101001',
  sumKopecks: '1978999',
  purpose: 'Оплата по счёту № 15 от 02.03.2026, в т.ч. НДС 3290.00 руб.',
});

describe('payment QR images', () => {
  it('uses the domain reference payload', () => {
    expect(REFERENCE_PAYLOAD).toBe(EXPECTED_QR_PAYLOAD);
  });

  it('PNG decodes with zbarimg back to exactly the UTF-8 payload', async () => {
    const png = await renderQrPng(REFERENCE_PAYLOAD);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(await decodeQrPng(png)).toBe(REFERENCE_PAYLOAD);
  });

  it('decodes a payload with a fallback separator and characters outside Cyrillic', async () => {
    const payload = buildPaymentQrPayload({
      name: 'ИП Петров | «Ёлка» & Co',
      personalAcc: '40702810938000000001',
      bankName: 'ПАО Сбербанк',
      bic: '044525225',
      correspAcc: '30101810400000000225',
      sumKopecks: 5,
      purpose: 'Оплата № 7 — «услуги»; 5 коп.',
    });
    expect(payload.startsWith('ST00012#')).toBe(true);
    expect(await decodeQrPng(await renderQrPng(payload))).toBe(payload);
  });

  it('holds windows-1251 bytes for an ST00011 payload: one byte a Cyrillic letter', async () => {
    const payload = buildPaymentQrPayload({
      name: 'ОБЩЕСТВО С ОГРАНИЧЕННОЙ ОТВЕТСТВЕННОСТЬЮ «ТОРГОВЫЙ ДОМ СЕВЕРНАЯ ЗВЕЗДА» ФИЛИАЛ',
      personalAcc: '40702810138250123017',
      bankName: 'ФИЛИАЛ «ЦЕНТРАЛЬНЫЙ» БАНКА ВТБ (ПАО)',
      bic: '044525225',
      correspAcc: '30101810400000000225',
      sumKopecks: 1978999,
      purpose: 'Оплата по счёту № 15 от 02.03.2026, в т.ч. НДС 3290.00 руб.',
    });
    expect(payload.startsWith('ST00011|')).toBe(true);
    const bytes = await decodeQrPngBytes(await renderQrPng(payload));
    expect(bytes.equals(iconv.encode(payload, 'win1251'))).toBe(true);
    expect(bytes.includes(Buffer.from('ОБЩЕСТВО', 'utf8'))).toBe(false);
    expect(iconv.decode(bytes, 'win1251')).toBe(payload);
  });

  it('is deterministic: equal payloads give byte-identical PNG and SVG', async () => {
    expect((await renderQrPng(REFERENCE_PAYLOAD)).equals(await renderQrPng(REFERENCE_PAYLOAD))).toBe(true);
    expect(await renderQrSvg(REFERENCE_PAYLOAD)).toBe(await renderQrSvg(REFERENCE_PAYLOAD));
  });

  it('SVG is a standalone image of the same symbol, with no text of the payload in it', async () => {
    const svg = await renderQrSvg(REFERENCE_PAYLOAD);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('width="300"');
    const { size, quietZone } = qrMatrix(REFERENCE_PAYLOAD);
    expect(svg).toContain(`viewBox="0 0 ${size + 2 * quietZone} ${size + 2 * quietZone}"`);
    expect(svg).not.toContain('Три кита');
  });

  it('uses error correction M in byte mode (version large enough for the UTF-8 bytes)', () => {
    const m = qrMatrix(REFERENCE_PAYLOAD);
    // 291 bytes at level M need version 13 (69 modules) or more; no ECI and no mode mixing.
    expect(m.size).toBeGreaterThanOrEqual(69);
    expect(m.quietZone).toBe(4);
    // Finder pattern: the top-left 7×7 corner is dark at its border.
    expect(m.isDark(0, 0) && m.isDark(0, 6) && m.isDark(6, 0) && !m.isDark(1, 1)).toBe(true);
  });

  it('refuses an empty payload', async () => {
    await expect(renderQrPng('')).rejects.toThrow(/non-empty/);
  });
});
