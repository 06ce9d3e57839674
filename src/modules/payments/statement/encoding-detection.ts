/**
 * Streaming decoding of a statement whose encoding is not declared reliably: UTF-8 (with or
 * without BOM), windows-1251 or cp866. The header's `Кодировка` is not trusted (banks write
 * `Windows` into UTF-8 exports); the bytes decide.
 *
 * How, in one pass and bounded memory:
 * - A UTF-8 BOM (EF BB BF) decides UTF-8 at once.
 * - Bytes below 0x80 read the same in all three encodings, so everything before the first byte
 *   ≥ 0x80 is passed on as ASCII immediately. Where the first non-ASCII byte sits in the file
 *   therefore does not matter: a file whose first Cyrillic text comes late is judged on that text.
 * - From the first byte ≥ 0x80 on, bytes are held back (views of the chunks they came in,
 *   never concatenated) up to the SAMPLE_HIGH_BYTES-th byte ≥ 0x80 or SAMPLE_MAX_BYTES bytes,
 *   or the end of the input; the sample is cut at that bound whatever the chunks, so the
 *   decision is the same however the body arrives. The sample then decides:
 *   1. UTF-8 when it holds multi-byte sequences and (nearly) nothing that breaks UTF-8's rules
 *      (MAX_INVALID_PER_SEQUENCE). Cyrillic in 1251 or 866 breaks them all the time: its letters
 *      are lead bytes (1251: C0–FF) not followed by continuation bytes, or stray continuation
 *      bytes (866: 80–AF).
 *   2. otherwise the byte ranges where the two code pages differ: C0–DF (1251 «А–Я», 866 box
 *      drawing) and F0–FF (1251 «р–я», 866 «Ёё» and symbols) count for windows-1251; 80–AF
 *      (866 «А–п», 1251 rare punctuation) counts for cp866. More for 866 → cp866, else 1251.
 *      Every key of the format is Cyrillic starting with a capital (`СекцияДокумент` gives 6 to 0
 *      in 1251 and 10 to 0 in 866), so the statistics are never close on a real file.
 * - A wrong guess cannot pass silently: the section markers (`СекцияДокумент`, `КонецФайла`) are
 *   Cyrillic, so a misdecoded file is refused for a missing `КонецФайла`.
 * Then the chosen streaming decoder (iconv-lite) decodes the held chunks and every later chunk.
 */
import iconv from 'iconv-lite';
import type { StatementEncoding } from './statement-types.js';

/** Bytes ≥ 0x80 that decide the encoding: 256 are a few lines of Cyrillic keys; 1024 leave a wide margin. */
export const SAMPLE_HIGH_BYTES = 1024;
/** Bytes held back at most while sampling (from the first byte ≥ 0x80). */
export const SAMPLE_MAX_BYTES = 64 * 1024;

const ICONV_NAMES: Record<StatementEncoding, string> = { 'utf-8': 'utf8', 'windows-1251': 'win1251', cp866: 'cp866' };

/**
 * UTF-8 when multi-byte sequences are found and at most one in 50 high bytes breaks the rules
 * (a corrupt byte or two in a UTF-8 file is then reported per line as `undecodable_bytes`
 * instead of turning the whole file into another code page). Cyrillic in 1251 breaks them at
 * nearly every letter; in cp866 at every capital and at every «а–п» not after «р–я».
 */
const MAX_INVALID_PER_SEQUENCE = 1 / 50;

/** Decides the encoding of a sample that starts at the first byte ≥ 0x80 (any chunking). */
export function detectEncoding(sample: readonly Uint8Array[]): StatementEncoding {
  let pending = 0; // continuation bytes still expected by the current UTF-8 sequence
  let invalid = 0;
  let multiByte = 0;
  let for1251 = 0;
  let for866 = 0;
  for (const chunk of sample) {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number;
      if (b >= 0x80) {
        if ((b >= 0xc0 && b <= 0xdf) || b >= 0xf0) for1251++;
        else if (b <= 0xaf) for866++;
      }
      if (pending > 0) {
        if (b >= 0x80 && b <= 0xbf) {
          if (--pending === 0) multiByte++;
          continue;
        }
        invalid++; // a sequence cut short: this byte starts afresh
        pending = 0;
      }
      if (b < 0x80) continue;
      if (b >= 0xc2 && b <= 0xf4) pending = b <= 0xdf ? 1 : b <= 0xef ? 2 : 3;
      else invalid++;
    }
  }
  // A sequence cut by the end of the sample is not evidence against UTF-8.
  if (multiByte > 0 && invalid <= multiByte * MAX_INVALID_PER_SEQUENCE) return 'utf-8';
  return for866 > for1251 ? 'cp866' : 'windows-1251';
}

type DecoderState = 'start' | 'ascii' | 'sampling' | 'decoding';

/**
 * Push bytes, get text. `push` returns the text decodable so far (possibly ''), `end` the rest.
 * Holds at most SAMPLE_MAX_BYTES while deciding, nothing after.
 */
export class DetectingDecoder {
  private state: DecoderState = 'start';
  private head: number[] = []; // up to 3 first bytes, while looking for a BOM
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  private heldHigh = 0;
  private decoder: { write(b: Buffer): string; end(): string | undefined } | null = null;
  private chosen: StatementEncoding = 'utf-8';
  /** The most bytes held back at once while sampling (observable bound). */
  maxHeldBytes = 0;

  /** The encoding in effect; 'utf-8' until decided (an all-ASCII file stays 'utf-8'). */
  get encoding(): StatementEncoding {
    return this.chosen;
  }

  push(input: Uint8Array): string {
    let chunk = input;
    if (this.state === 'start') {
      const need = 3 - this.head.length;
      for (let i = 0; i < need && i < chunk.length; i++) this.head.push(chunk[i] as number);
      chunk = chunk.subarray(Math.min(need, chunk.length));
      if (this.head.length < 3) return '';
      const bom = this.head[0] === 0xef && this.head[1] === 0xbb && this.head[2] === 0xbf;
      const head = Uint8Array.from(this.head);
      this.head = [];
      if (bom) {
        this.choose('utf-8');
        return this.decode(chunk);
      }
      this.state = 'ascii';
      return this.pushAfterStart(head) + this.pushAfterStart(chunk);
    }
    return this.pushAfterStart(chunk);
  }

  end(): string {
    let text = '';
    if (this.state === 'start') {
      const head = Uint8Array.from(this.head);
      this.head = [];
      this.state = 'ascii';
      text += this.pushAfterStart(head);
    }
    if (this.state === 'sampling') text += this.decide();
    if (this.decoder !== null) text += this.decoder.end() ?? '';
    return text;
  }

  private pushAfterStart(chunk: Uint8Array): string {
    if (chunk.length === 0) return '';
    if (this.state === 'decoding') return this.decode(chunk);
    if (this.state === 'ascii') {
      const firstHigh = chunk.findIndex((b) => b >= 0x80);
      if (firstHigh < 0) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length).toString('latin1');
      const ascii = Buffer.from(chunk.buffer, chunk.byteOffset, firstHigh).toString('latin1');
      this.state = 'sampling';
      return ascii + this.pushAfterStart(chunk.subarray(firstHigh));
    }
    // sampling: take bytes up to the sample's bound, so the decision never depends on the chunking
    const room = Math.min(chunk.length, SAMPLE_MAX_BYTES - this.heldBytes);
    let taken = 0;
    while (taken < room && this.heldHigh < SAMPLE_HIGH_BYTES) {
      if ((chunk[taken++] as number) >= 0x80) this.heldHigh++;
    }
    this.held.push(chunk.subarray(0, taken));
    this.heldBytes += taken;
    this.maxHeldBytes = Math.max(this.maxHeldBytes, this.heldBytes);
    if (this.heldHigh < SAMPLE_HIGH_BYTES && this.heldBytes < SAMPLE_MAX_BYTES) return '';
    return this.decide() + this.decode(chunk.subarray(taken));
  }

  private decide(): string {
    this.choose(detectEncoding(this.held));
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    let text = '';
    for (const chunk of held) text += this.decode(chunk);
    return text;
  }

  private choose(encoding: StatementEncoding): void {
    this.chosen = encoding;
    this.state = 'decoding';
    this.decoder = iconv.getDecoder(ICONV_NAMES[encoding], { stripBOM: false });
  }

  private decode(chunk: Uint8Array): string {
    if (chunk.length === 0 || this.decoder === null) return '';
    return this.decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  }
}
