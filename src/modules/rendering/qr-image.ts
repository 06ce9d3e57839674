/**
 * Images of the payment QR (GOST R 56042-2014 payload, see qr-payload.ts): PNG for the share
 * link's `qr.png`, SVG for `qr.svg`, and the bare module matrix the PDF draws as vectors.
 *
 * Encoding choices, all fixed so equal payloads give byte-identical images:
 * - one byte-mode segment holding the payload's bytes in its declared encoding (UTF-8 for
 *   `ST00012`, windows-1251 for `ST00011`), without an ECI header: the GOST header already
 *   declares the encoding, and banking apps expect plain byte mode (the library's automatic
 *   mode splitting would mix numeric/alphanumeric segments for no gain);
 * - error correction M, as banks print it (survives a crease or a smudge on paper);
 * - a quiet zone of 4 modules, the QR specification's minimum, so scanners find the symbol.
 */
import QRCode, { type QRCodeSegment } from 'qrcode';
import { qrPayloadBytes } from '../../shared/qr-encoding.js';

const ERROR_CORRECTION = 'M' as const;
const QUIET_ZONE = 4;
/** 6 px per module: a typical payload (version ~15, 77 modules) becomes ~460 px. */
const PNG_SCALE = 6;
/** The SVG's nominal size; it scales freely, the attribute only sets the default. */
const SVG_WIDTH = 300;

function segments(payload: string): QRCodeSegment[] {
  if (typeof payload !== 'string' || payload === '') throw new Error('QR payload must be a non-empty string');
  return [{ mode: 'byte', data: qrPayloadBytes(payload) }];
}

/** PNG of the payment QR: black on white, error correction M, quiet zone 4. */
export async function renderQrPng(payload: string): Promise<Buffer> {
  return QRCode.toBuffer(segments(payload), {
    type: 'png',
    errorCorrectionLevel: ERROR_CORRECTION,
    margin: QUIET_ZONE,
    scale: PNG_SCALE,
    color: { dark: '#000000ff', light: '#ffffffff' },
  });
}

/** SVG of the payment QR (same symbol as the PNG). The text holds no user data but the matrix. */
export async function renderQrSvg(payload: string): Promise<string> {
  return QRCode.toString(segments(payload), {
    type: 'svg',
    errorCorrectionLevel: ERROR_CORRECTION,
    margin: QUIET_ZONE,
    width: SVG_WIDTH,
    color: { dark: '#000000ff', light: '#ffffffff' },
  });
}

export interface QrMatrix {
  /** Modules per side, without the quiet zone. */
  size: number;
  /** Quiet zone the renderer must leave white around the symbol, in modules. */
  quietZone: number;
  isDark(row: number, col: number): boolean;
}

/** The module matrix of the same symbol, for renderers that draw it themselves (the PDF). */
export function qrMatrix(payload: string): QrMatrix {
  const code = QRCode.create(segments(payload), { errorCorrectionLevel: ERROR_CORRECTION });
  const { size, data } = code.modules;
  return { size, quietZone: QUIET_ZONE, isDark: (row, col) => data[row * size + col] === 1 };
}
