/**
 * The character encodings of a GOST R 56042-2014 payment string and the bytes a QR symbol
 * holds for one. Shared by the payload builder (invoices) and the QR renderer (rendering): the
 * header `ST0001` + the encoding digit declares the encoding, and the symbol's bytes must be
 * that encoding's.
 */
import iconv from 'iconv-lite';

export type QrEncoding = 'utf-8' | 'windows-1251';

/** Every GOST payment string starts with this, then the encoding digit. */
export const QR_HEADER_PREFIX = 'ST0001';
/** Encoding digit 2 = UTF-8, 1 = windows-1251 (3 = KOI8-R, not emitted). */
export const QR_ENCODING_DIGIT: Record<QrEncoding, string> = { 'utf-8': '2', 'windows-1251': '1' };

/** True when every character of `text` has a windows-1251 byte (a round trip gives it back). */
export function fitsWindows1251(text: string): boolean {
  return iconv.decode(iconv.encode(text, 'win1251'), 'win1251') === text;
}

/** Byte length of `text` in `encoding`. */
export function qrByteLength(text: string, encoding: QrEncoding): number {
  return encoding === 'utf-8' ? Buffer.byteLength(text, 'utf8') : iconv.encode(text, 'win1251').length;
}

/** The declared encoding of a payment string, read from its header (`ST00011` / `ST00012`). */
export function qrPayloadEncoding(payload: string): QrEncoding {
  return payload.startsWith(QR_HEADER_PREFIX + QR_ENCODING_DIGIT['windows-1251']) ? 'windows-1251' : 'utf-8';
}

/**
 * The bytes a QR symbol must hold for `payload`: the payload in its declared encoding.
 * Throws when a windows-1251 payload holds a character that encoding lacks (never for a
 * payload the service builds).
 */
export function qrPayloadBytes(payload: string): Buffer {
  if (qrPayloadEncoding(payload) === 'utf-8') return Buffer.from(payload, 'utf8');
  if (!fitsWindows1251(payload)) throw new Error('payload declares windows-1251 but holds a character outside it');
  return iconv.encode(payload, 'win1251');
}
