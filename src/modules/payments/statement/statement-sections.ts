/**
 * From the key=value lines of one section to a document or an account's balances. Pure; the
 * parser (statement-parser.ts) collects the lines and calls these at the section's end.
 */
import { nameWithoutInn, parseStatementAmount, parseStatementBalance, parseStatementDate } from './statement-values.js';
import {
  STATEMENT_LIMITS,
  StatementError,
  type Kopecks,
  type StatementAccount,
  type StatementDocument,
  type StatementParty,
  type StatementWarning,
} from './statement-types.js';

export interface SectionField {
  value: string;
  /** 1-based line of the key=value line. */
  line: number;
}

export interface OpenSection {
  type: 'document' | 'account';
  /** The marker's value (`СекцияДокумент=Платежное поручение` → «Платежное поручение»). */
  kind: string;
  /** 1-based line of the marker. */
  line: number;
  fields: Map<string, SectionField>;
}

export type WarningSink = (warning: StatementWarning) => void;

/** The numbered purpose parts the format defines. */
const PURPOSE_PARTS = ['НазначениеПлатежа1', 'НазначениеПлатежа2', 'НазначениеПлатежа3', 'НазначениеПлатежа4', 'НазначениеПлатежа5', 'НазначениеПлатежа6'];

function present(section: OpenSection, key: string): SectionField | null {
  const field = section.fields.get(key);
  return field !== undefined && field.value !== '' ? field : null;
}

function text(section: OpenSection, key: string): string | null {
  return present(section, key)?.value ?? null;
}

/** INN and KPP: `0` is the format's "none" (an individual without one), never a real code. */
function code(section: OpenSection, key: string): string | null {
  const value = text(section, key);
  return value === null || /^0+$/.test(value) ? null : value;
}

function date(section: OpenSection, key: string): string | null {
  const field = present(section, key);
  return field === null ? null : parseStatementDate(field.value, field.line, key);
}

function party(section: OpenSection, prefix: 'Плательщик' | 'Получатель'): StatementParty {
  const plain = text(section, prefix);
  const stripped = plain === null ? null : nameWithoutInn(plain);
  return {
    name: text(section, `${prefix}1`) ?? (stripped === '' ? null : stripped),
    inn: code(section, `${prefix}ИНН`),
    kpp: code(section, `${prefix}КПП`),
    account: text(section, `${prefix}РасчСчет`) ?? text(section, `${prefix}Счет`),
    bik: text(section, `${prefix}БИК`),
    bank_name: text(section, `${prefix}Банк1`),
  };
}

function purpose(section: OpenSection): string {
  const whole = text(section, 'НазначениеПлатежа');
  if (whole !== null) return whole;
  const parts: string[] = [];
  for (const key of PURPOSE_PARTS) {
    const part = text(section, key);
    if (part !== null) parts.push(part);
  }
  return parts.join(' ');
}

/** A `СекцияДокумент … КонецДокумента` section as a document; refuses one without amount or any date. */
export function buildDocument(section: OpenSection, warn: WarningSink): StatementDocument {
  const sum = section.fields.get('Сумма');
  if (sum === undefined) throw new StatementError('missing_amount', section.line, 'a document without Сумма');
  const amount = parseStatementAmount(sum.value, sum.line, 'Сумма');
  if (amount === 0n) warn({ code: 'zero_amount', message: 'a document with Сумма 0', line: sum.line });
  const document: StatementDocument = {
    kind: section.kind,
    line: section.line,
    number: text(section, 'Номер'),
    date: date(section, 'Дата'),
    amount,
    payer: party(section, 'Плательщик'),
    recipient: party(section, 'Получатель'),
    received_date: date(section, 'ДатаПоступило'),
    written_off_date: date(section, 'ДатаСписано'),
    purpose: purpose(section),
    fields: Object.create(null) as Record<string, string>,
  };
  if (document.date === null && document.received_date === null && document.written_off_date === null) {
    throw new StatementError('missing_date', section.line, 'a document without Дата, ДатаПоступило or ДатаСписано');
  }
  for (const [key, field] of section.fields) document.fields[key] = field.value;
  return document;
}

function balance(section: OpenSection, key: string): Kopecks | null {
  const field = present(section, key);
  return field === null ? null : parseStatementBalance(field.value, field.line, key);
}

const formatKopecks = (k: Kopecks): string => {
  const sign = k < 0n ? '-' : '';
  const abs = k < 0n ? -k : k;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
};

/**
 * The accounts of one statement: from the header's `РасчСчет` lines and the
 * `СекцияРасчСчет … КонецРасчСчет` sections. Several sections of one account (some banks write
 * one per day) merge: the first section's opening balance and `ДатаНачала`, the last one's
 * closing balance and `ДатаКонца`, the totals summed. Each section is checked on its own
 * (opening + received − written off = closing) and against the previous section of its
 * account (its opening = the previous closing), so the merged figures balance exactly when no
 * `balance_mismatch` is reported.
 */
export class AccountBook {
  private readonly byAccount = new Map<string, StatementAccount>();
  /** Accounts that had a section already (the next one of theirs is merged in). */
  private readonly sectioned = new Set<string>();
  private sections = 0;

  list(): StatementAccount[] {
    return [...this.byAccount.values()];
  }

  /** A header `РасчСчет` line: the account is the statement's even without a section. */
  addHeaderAccount(account: string, line: number): void {
    if (account !== '' && !this.byAccount.has(account)) this.create(account, line);
  }

  addSection(section: OpenSection, warn: WarningSink): void {
    if (++this.sections > STATEMENT_LIMITS.maxAccountSections) {
      throw new StatementError('too_many_accounts', section.line, `more than ${STATEMENT_LIMITS.maxAccountSections} account sections`);
    }
    const account = text(section, 'РасчСчет');
    if (account === null) throw new StatementError('missing_account', section.line, 'an account section without РасчСчет');
    const opening = balance(section, 'НачальныйОстаток');
    const received = balance(section, 'ВсегоПоступило');
    const writtenOff = balance(section, 'ВсегоСписано');
    const closing = balance(section, 'КонечныйОстаток');
    const dateFrom = date(section, 'ДатаНачала');
    const dateTo = date(section, 'ДатаКонца');
    if (opening !== null && received !== null && writtenOff !== null && closing !== null && opening + received - writtenOff !== closing) {
      warn({
        code: 'balance_mismatch',
        line: section.line,
        message: `account ${account}: opening ${formatKopecks(opening)} + received ${formatKopecks(received)} − written off ${formatKopecks(writtenOff)} = ${formatKopecks(opening + received - writtenOff)}, not the closing ${formatKopecks(closing)}`,
      });
    }
    const existing = this.byAccount.get(account);
    const entry = existing ?? this.create(account, section.line);
    if (!this.sectioned.has(account)) {
      this.sectioned.add(account);
      Object.assign(entry, { line: section.line, date_from: dateFrom, date_to: dateTo, opening_balance: opening, received_total: received, written_off_total: writtenOff, closing_balance: closing });
      return;
    }
    if (entry.closing_balance !== null && opening !== null && entry.closing_balance !== opening) {
      warn({
        code: 'balance_mismatch',
        line: section.line,
        message: `account ${account}: opening ${formatKopecks(opening)} differs from the previous section's closing ${formatKopecks(entry.closing_balance)}`,
      });
    }
    entry.date_to = dateTo ?? entry.date_to;
    entry.received_total = received === null || entry.received_total === null ? null : entry.received_total + received;
    entry.written_off_total = writtenOff === null || entry.written_off_total === null ? null : entry.written_off_total + writtenOff;
    entry.closing_balance = closing;
  }

  private create(account: string, line: number): StatementAccount {
    if (this.byAccount.size >= STATEMENT_LIMITS.maxAccounts) {
      throw new StatementError('too_many_accounts', line, `more than ${STATEMENT_LIMITS.maxAccounts} accounts`);
    }
    const entry: StatementAccount = { account, line, date_from: null, date_to: null, opening_balance: null, received_total: null, written_off_total: null, closing_balance: null };
    this.byAccount.set(account, entry);
    return entry;
  }
}
