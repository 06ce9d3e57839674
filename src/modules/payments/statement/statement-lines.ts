/**
 * Decoded text in pieces → numbered lines. Lines end in LF or CRLF (a CR before the LF is
 * dropped, also when the two arrive in different pieces). Linear: each piece is scanned once
 * and only the unfinished last line is carried over, bounded by `maxLineChars`, so a line
 * split over many pieces never costs more than its own length.
 */
import { StatementError } from './statement-types.js';

export type LineSink = (line: string, lineNumber: number) => void;

export class LineSplitter {
  private carry: string[] = [];
  private carryChars = 0;
  private lineNumber = 0;
  /** The longest unfinished line held at once, in characters (observable bound). */
  maxCarriedChars = 0;

  constructor(
    private readonly sink: LineSink,
    private readonly maxLineChars: number,
  ) {}

  /** The number of lines handed to the sink so far. */
  get lines(): number {
    return this.lineNumber;
  }

  push(text: string): void {
    let start = 0;
    for (;;) {
      const lf = text.indexOf('\n', start);
      if (lf < 0) break;
      this.emit(this.take(text.slice(start, lf)));
      start = lf + 1;
    }
    if (start < text.length) {
      const rest = text.slice(start);
      this.carry.push(rest);
      this.carryChars += rest.length;
      this.maxCarriedChars = Math.max(this.maxCarriedChars, this.carryChars);
      this.checkLength(this.carryChars);
    }
  }

  /** The last line, when the text does not end in a line break. */
  end(): void {
    if (this.carryChars > 0) this.emit(this.take(''));
  }

  private take(tail: string): string {
    if (this.carry.length === 0) return tail;
    const line = this.carry.join('') + tail;
    this.carry = [];
    this.carryChars = 0;
    return line;
  }

  private emit(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    this.lineNumber++;
    this.checkLength(line.length);
    this.sink(line, this.lineNumber);
  }

  private checkLength(chars: number): void {
    if (chars > this.maxLineChars) {
      throw new StatementError('line_too_long', this.lineNumber + (this.carryChars > 0 ? 1 : 0), `a line longer than ${this.maxLineChars} characters`);
    }
  }
}
