/**
 * The 1CClientBankExchange statement parser: bytes in (pushed in chunks, e.g. straight from a
 * request body), a ParsedStatement out, or a StatementError naming the line at fault.
 *
 * One pass, linear in the file: the bytes are decoded as they come (encoding-detection.ts, which
 * holds at most 64 KiB while deciding), cut into lines (statement-lines.ts, which carries only
 * the unfinished line) and each line goes through a small state machine:
 *
 *   before the marker → (first non-empty line `1CClientBankExchange`) → header
 *   header ⇄ `СекцияРасчСчет … КонецРасчСчет` | `СекцияДокумент=<kind> … КонецДокумента`
 *   `КонецФайла` → the end (later lines ignored with one warning)
 *
 * Outside the sections a `key=value` line belongs to the header (kept even after a section). A
 * line is split at its first `=`; key and value are trimmed; empty values and unknown keys are
 * kept. What refuses a file and what only warns: statement-types.ts, docs/payments.md.
 */
import { DetectingDecoder } from './encoding-detection.js';
import { LineSplitter } from './statement-lines.js';
import { AccountBook, buildDocument, type OpenSection } from './statement-sections.js';
import {
  STATEMENT_LIMITS,
  StatementError,
  type ParsedStatement,
  type StatementDocument,
  type StatementWarning,
} from './statement-types.js';
import { parseStatementDate } from './statement-values.js';

const MARKER = '1cclientbankexchange';
const KNOWN_VERSIONS = new Set(['1.02', '1.03']);
/** Pieces a whole buffer is fed in, so a buffer goes through the same bounded stages as a stream. */
const FEED_PIECE_BYTES = 64 * 1024;

/** What the parser held at most at once: the bounds the streaming stages keep. */
export interface StatementParserStats {
  bytes: number;
  lines: number;
  /** Bytes held back while detecting the encoding (≤ 64 KiB). */
  max_held_bytes: number;
  /** Characters of an unfinished line carried between pieces (≤ STATEMENT_LIMITS.maxLineChars). */
  max_carried_chars: number;
}

export class StatementParser {
  private readonly decoder = new DetectingDecoder();
  private readonly splitter = new LineSplitter((line, n) => this.onLine(line, n), STATEMENT_LIMITS.maxLineChars);
  private bytes = 0;
  private started = false;
  private ended = false;
  private warnedAfterEnd = false;
  private section: OpenSection | null = null;
  private readonly header = Object.create(null) as Record<string, string | string[]>;
  private headerEntries = 0;
  private versionSeen = false;
  private dateFrom: string | null = null;
  private dateTo: string | null = null;
  private readonly accounts = new AccountBook();
  private readonly documents: StatementDocument[] = [];
  private readonly warnings: StatementWarning[] = [];
  private droppedWarnings = 0;
  private firstDroppedLine = 0;

  push(chunk: Uint8Array): void {
    if (!(chunk instanceof Uint8Array)) throw new TypeError('a statement is read from bytes (Buffer or Uint8Array chunks)');
    this.bytes += chunk.length;
    if (this.bytes > STATEMENT_LIMITS.maxBytes) {
      throw new StatementError('too_large', this.splitter.lines + 1, `the file is larger than ${STATEMENT_LIMITS.maxBytes} bytes`);
    }
    this.feed(this.decoder.push(chunk));
  }

  end(): ParsedStatement {
    this.feed(this.decoder.end());
    this.guardFirstLine(() => this.splitter.end());
    const last = Math.max(1, this.splitter.lines);
    if (!this.started) throw new StatementError('not_a_statement', last, 'no 1CClientBankExchange line: not a 1CClientBankExchange statement');
    if (this.section !== null) throw this.notClosed(this.section);
    if (!this.ended) throw new StatementError('missing_end_of_file', last, 'the file ends without КонецФайла');
    if (!this.versionSeen) this.warn({ code: 'format_version_missing', message: 'no ВерсияФормата in the header', line: 1 });
    if (this.droppedWarnings > 0) {
      this.warnings.push({ code: 'warnings_truncated', message: `${this.droppedWarnings} more warnings not listed`, line: this.firstDroppedLine });
    }
    const version = this.header['ВерсияФормата'];
    const sender = this.header['Отправитель'];
    return {
      format_version: (Array.isArray(version) ? version[0] : version) || null,
      encoding: this.decoder.encoding,
      sender: (Array.isArray(sender) ? sender[0] : sender) || null,
      date_from: this.dateFrom,
      date_to: this.dateTo,
      header: this.header,
      accounts: this.accounts.list(),
      documents: this.documents,
      warnings: this.warnings,
      line_count: this.splitter.lines,
    };
  }

  stats(): StatementParserStats {
    return { bytes: this.bytes, lines: this.splitter.lines, max_held_bytes: this.decoder.maxHeldBytes, max_carried_chars: this.splitter.maxCarriedChars };
  }

  private feed(text: string): void {
    if (text !== '') this.guardFirstLine(() => this.splitter.push(text));
  }

  /** Before the marker, an endless first line is a file of another kind, not an overlong line. */
  private guardFirstLine(step: () => void): void {
    try {
      step();
    } catch (error) {
      if (!this.started && error instanceof StatementError && error.reason === 'line_too_long') {
        throw new StatementError('not_a_statement', error.line, 'the first line is not 1CClientBankExchange');
      }
      throw error;
    }
  }

  private warn(warning: StatementWarning): void {
    if (this.warnings.length < STATEMENT_LIMITS.maxWarnings) {
      this.warnings.push(warning);
      return;
    }
    if (this.droppedWarnings++ === 0) this.firstDroppedLine = warning.line;
  }

  private onLine(raw: string, n: number): void {
    const line = raw.trim();
    if (line === '') return;
    if (!this.started) {
      if (line.toLowerCase() !== MARKER) throw new StatementError('not_a_statement', n, 'the first line is not 1CClientBankExchange');
      this.started = true;
      return;
    }
    if (this.ended) {
      if (!this.warnedAfterEnd) this.warn({ code: 'content_after_end', message: 'lines after КонецФайла are ignored', line: n });
      this.warnedAfterEnd = true;
      return;
    }
    if (line.includes('\uFFFD')) this.warn({ code: 'undecodable_bytes', message: `bytes that are not valid ${this.decoder.encoding} were replaced`, line: n });
    const eq = line.indexOf('=');
    const key = eq < 0 ? line : line.slice(0, eq).trimEnd();
    const value = eq < 0 ? '' : line.slice(eq + 1).trimStart();
    if (key.length > STATEMENT_LIMITS.maxKeyChars) throw new StatementError('key_too_long', n, `a key longer than ${STATEMENT_LIMITS.maxKeyChars} characters`);
    if (value.length > STATEMENT_LIMITS.maxValueChars) {
      throw new StatementError('value_too_long', n, `${key}: a value longer than ${STATEMENT_LIMITS.maxValueChars} characters`);
    }
    switch (key) {
      case 'СекцияДокумент':
        return this.open('document', value, n);
      case 'СекцияРасчСчет':
        return this.open('account', value, n);
      case 'КонецДокумента':
        return this.close('document', key, n);
      case 'КонецРасчСчет':
        return this.close('account', key, n);
      case 'КонецФайла':
        if (this.section !== null) throw this.notClosed(this.section);
        this.ended = true;
        return;
    }
    if (eq < 0) {
      this.warn({ code: 'unrecognized_line', message: `a line without "=" is skipped: ${JSON.stringify(line.slice(0, 40))}`, line: n });
    } else if (this.section !== null) {
      this.addField(this.section, key, value, n);
    } else {
      this.addHeader(key, value, n);
    }
  }

  private notClosed(section: OpenSection): StatementError {
    const marker = section.type === 'document' ? 'СекцияДокумент' : 'СекцияРасчСчет';
    const end = section.type === 'document' ? 'КонецДокумента' : 'КонецРасчСчет';
    return new StatementError('section_not_closed', section.line, `${marker} is not closed by ${end}`);
  }

  private open(type: OpenSection['type'], kind: string, n: number): void {
    if (this.section !== null) {
      const marker = type === 'document' ? 'СекцияДокумент' : 'СекцияРасчСчет';
      throw new StatementError('nested_section', n, `${marker} inside the section opened at line ${this.section.line}`);
    }
    if (type === 'document' && this.documents.length >= STATEMENT_LIMITS.maxDocuments) {
      throw new StatementError('too_many_documents', n, `more than ${STATEMENT_LIMITS.maxDocuments} documents`);
    }
    this.section = { type, kind, line: n, fields: new Map() };
  }

  private close(type: OpenSection['type'], key: string, n: number): void {
    const section = this.section;
    if (section === null) throw new StatementError('unexpected_section_end', n, `${key} without an open section`);
    if (section.type !== type) {
      throw new StatementError('unexpected_section_end', n, `${key} does not close the section opened at line ${section.line}`);
    }
    this.section = null;
    const warn = (w: StatementWarning) => this.warn(w);
    if (type === 'document') this.documents.push(buildDocument(section, warn));
    else this.accounts.addSection(section, warn);
  }

  private addField(section: OpenSection, key: string, value: string, n: number): void {
    if (section.fields.has(key)) {
      this.warn({ code: 'repeated_key', message: `${key} repeated in the section opened at line ${section.line}: the last value is kept`, line: n });
    } else if (section.fields.size >= STATEMENT_LIMITS.maxFieldsPerSection) {
      throw new StatementError('too_many_fields', n, `more than ${STATEMENT_LIMITS.maxFieldsPerSection} keys in the section opened at line ${section.line}`);
    }
    section.fields.set(key, { value, line: n });
  }

  private addHeader(key: string, value: string, n: number): void {
    if (++this.headerEntries > STATEMENT_LIMITS.maxHeaderEntries) {
      throw new StatementError('too_many_header_entries', n, `more than ${STATEMENT_LIMITS.maxHeaderEntries} header lines`);
    }
    const existing = this.header[key];
    if (existing === undefined) {
      this.header[key] = value;
      this.readFirstHeaderValue(key, value, n);
    } else if (typeof existing === 'string') {
      this.header[key] = [existing, value];
    } else {
      existing.push(value);
    }
    if (key === 'РасчСчет') this.accounts.addHeaderAccount(value, n);
  }

  /** The header keys the statement reads (the first occurrence of each). */
  private readFirstHeaderValue(key: string, value: string, n: number): void {
    if (key === 'ВерсияФормата') {
      this.versionSeen = true;
      if (!KNOWN_VERSIONS.has(value)) this.warn({ code: 'unknown_format_version', message: `ВерсияФормата ${JSON.stringify(value.slice(0, 20))} is neither 1.02 nor 1.03`, line: n });
    } else if (key === 'ДатаНачала' && value !== '') {
      this.dateFrom = parseStatementDate(value, n, key);
    } else if (key === 'ДатаКонца' && value !== '') {
      this.dateTo = parseStatementDate(value, n, key);
    }
  }
}

export type StatementInput = Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

/** A whole statement in memory (≤ 5 MB), parsed synchronously in 64 KiB views (no copy). */
export function parseStatementBuffer(buffer: Uint8Array): ParsedStatement {
  const parser = new StatementParser();
  for (let at = 0; at < buffer.length; at += FEED_PIECE_BYTES) parser.push(buffer.subarray(at, at + FEED_PIECE_BYTES));
  return parser.end();
}

/**
 * Parses a statement from a buffer or from chunks as they arrive (a request body stream). Throws
 * StatementError for a refused file, also `too_large` past 5 MB without reading further.
 */
export async function parseStatement(input: StatementInput): Promise<ParsedStatement> {
  if (input instanceof Uint8Array) return parseStatementBuffer(input);
  const parser = new StatementParser();
  if (Symbol.asyncIterator in input) {
    for await (const chunk of input) parser.push(chunk);
  } else {
    for (const chunk of input) parser.push(chunk);
  }
  return parser.end();
}
