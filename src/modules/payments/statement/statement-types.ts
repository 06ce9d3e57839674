/**
 * The shapes of a parsed 1CClientBankExchange bank statement, its bounds and its refusal.
 * Pure types and constants: the parser (statement-parser.ts) produces them, the storage and the
 * routes read them. Amounts are exact kopecks as `bigint`, never binary floats; dates are
 * calendar dates `YYYY-MM-DD`. The format as understood: docs/payments.md.
 */

/** Exact kopecks (minor units). Serialize with `String(k)`; never convert to a float. */
export type Kopecks = bigint;

export type StatementEncoding = 'utf-8' | 'windows-1251' | 'cp866';

/** A payer or recipient as the statement names it; an absent or empty key is null. */
export interface StatementParty {
  /** `Плательщик1` (or `Плательщик` with a leading «ИНН nnn» stripped); the same for `Получатель`. */
  name: string | null;
  /** `…ИНН`; `0` (a common "none") is null. */
  inn: string | null;
  /** `…КПП`; `0` is null. */
  kpp: string | null;
  /** `…РасчСчет` when non-empty, else `…Счет`. */
  account: string | null;
  /** `…БИК`. */
  bik: string | null;
  /** `…Банк1`. */
  bank_name: string | null;
}

export interface StatementDocument {
  /** The value of `СекцияДокумент`: «Платежное поручение», «Банковский ордер», … (may be ''). */
  kind: string;
  /** 1-based line number of the `СекцияДокумент` line. */
  line: number;
  /** `Номер` (null when absent or empty). */
  number: string | null;
  /** `Дата` as YYYY-MM-DD. */
  date: string | null;
  /** `Сумма` in kopecks (≥ 0). */
  amount: Kopecks;
  payer: StatementParty;
  recipient: StatementParty;
  /** `ДатаПоступило` as YYYY-MM-DD. */
  received_date: string | null;
  /** `ДатаСписано` as YYYY-MM-DD. */
  written_off_date: string | null;
  /** A non-empty `НазначениеПлатежа`, else the non-empty `НазначениеПлатежа1…6` joined with single spaces; '' when none. */
  purpose: string;
  /** Every `key=value` of the section as written (trimmed), unknown keys included; a repeated key keeps its last value. */
  fields: Record<string, string>;
}

export interface StatementAccount {
  /** The account number (`РасчСчет`). */
  account: string;
  /** 1-based line of its first `СекцияРасчСчет`, or of the header `РасчСчет` line for an account without a section. */
  line: number;
  /** The first section's `ДатаНачала` / the last section's `ДатаКонца` (YYYY-MM-DD). */
  date_from: string | null;
  date_to: string | null;
  /** Balances may be negative (an overdraft account); null when the section omits them. */
  opening_balance: Kopecks | null;
  received_total: Kopecks | null;
  written_off_total: Kopecks | null;
  closing_balance: Kopecks | null;
}

export const STATEMENT_WARNING_CODES = [
  /** opening + received − written off ≠ closing in an account section, or a section's opening ≠ the previous section's closing. */
  'balance_mismatch',
  /** `ВерсияФормата` is neither 1.02 nor 1.03 (the file is still read). */
  'unknown_format_version',
  /** No `ВерсияФормата` in the header. */
  'format_version_missing',
  /** A key repeated inside one section: the last value is kept. */
  'repeated_key',
  /** A non-empty line that is neither `key=value` nor a section marker: skipped. */
  'unrecognized_line',
  /** Non-empty lines after `КонецФайла`: ignored. */
  'content_after_end',
  /** Bytes that are not valid in the detected encoding (UTF-8 only) were replaced by U+FFFD. */
  'undecodable_bytes',
  /** A document with `Сумма` 0. */
  'zero_amount',
  /** More than STATEMENT_LIMITS.maxWarnings warnings: the rest are counted in this one's message. */
  'warnings_truncated',
] as const;
export type StatementWarningCode = (typeof STATEMENT_WARNING_CODES)[number];

export interface StatementWarning {
  code: StatementWarningCode;
  message: string;
  /** 1-based line number the warning is about. */
  line: number;
}

export interface ParsedStatement {
  /** `ВерсияФормата` as written (e.g. "1.03"), null when absent. */
  format_version: string | null;
  /** The detected encoding (the header's `Кодировка` is not trusted). */
  encoding: StatementEncoding;
  /** `Отправитель`. */
  sender: string | null;
  /** Header `ДатаНачала` / `ДатаКонца` as YYYY-MM-DD. */
  date_from: string | null;
  date_to: string | null;
  /** Every key=value outside the sections; a key seen more than once (`РасчСчет`, `Документ`) holds an array in file order. */
  header: Record<string, string | string[]>;
  /** One entry per account, in order of first appearance (header `РасчСчет` or `СекцияРасчСчет`); sections of one account merged. */
  accounts: StatementAccount[];
  documents: StatementDocument[];
  warnings: StatementWarning[];
  /** Lines read (the last line's number). */
  line_count: number;
}

/**
 * Bounds of one statement. A real bank export of a busy month is well under 1 MB and 5,000
 * documents; the bounds sit far above that and keep a hostile file cheap to refuse.
 */
export const STATEMENT_LIMITS = {
  /** Bytes of the file: the contract's 5 MB (the route enforces it too). */
  maxBytes: 5 * 1024 * 1024,
  /** Characters of one line: the longest value plus its key fits many times over. */
  maxLineChars: 64 * 1024,
  /** Characters of one key: the format's keys have at most about 25 (`ДатаОтсылкиДокументов`); unknown keys get room. */
  maxKeyChars: 200,
  /** Characters of one value: a purpose is at most 210 by the bank standard, a name 160. */
  maxValueChars: 2000,
  /** Documents of one file: 20,000 fill the 5 MB at ~260 bytes each, 50,000 is the ceiling. */
  maxDocuments: 50_000,
  /** `СекцияРасчСчет` sections of one file (a section per account, or per account and day). */
  maxAccountSections: 5_000,
  /** Distinct accounts of one file. */
  maxAccounts: 100,
  /** Keys of one document section: the format defines about 60. */
  maxFieldsPerSection: 300,
  /** Header entries (repeated keys counted each time). */
  maxHeaderEntries: 1_000,
  /** Warnings kept; the rest are counted in a final `warnings_truncated`. */
  maxWarnings: 100,
} as const;

export const STATEMENT_ERROR_REASONS = [
  'not_a_statement',
  'too_large',
  'line_too_long',
  'key_too_long',
  'value_too_long',
  'nested_section',
  'unexpected_section_end',
  'section_not_closed',
  'missing_end_of_file',
  'invalid_amount',
  'invalid_date',
  'missing_amount',
  'missing_date',
  'missing_account',
  'too_many_documents',
  'too_many_accounts',
  'too_many_fields',
  'too_many_header_entries',
] as const;
export type StatementErrorReason = (typeof STATEMENT_ERROR_REASONS)[number];

/**
 * A refused statement: nothing of it may be stored. `line` is the 1-based line at fault; the
 * route answers 400 `invalid_statement` with `details` = `message` (which starts «line N:»).
 */
export class StatementError extends Error {
  readonly reason: StatementErrorReason;
  readonly line: number;

  constructor(reason: StatementErrorReason, line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.name = 'StatementError';
    this.reason = reason;
    this.line = line;
  }
}
