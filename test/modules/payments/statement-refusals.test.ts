import { describe, expect, it } from 'vitest';
import { STATEMENT_LIMITS, StatementError, parseStatement, parseStatementBuffer } from '../../../src/modules/payments/index.js';
import { parseStatementAmount, parseStatementBalance, parseStatementDate } from '../../../src/modules/payments/statement/statement-values.js';
import { documentLines, encodeLines, refusal, statementLines } from './statement-builder.js';

const refuse = (lines: string[], encoding: Parameters<typeof encodeLines>[1] = 'windows-1251') =>
  refusal(() => parseStatementBuffer(encodeLines(lines, encoding)));

/** The default statement's lines, edited. */
const edited = (edit: (lines: string[]) => string[]): string[] => edit(statementLines());
/** 1-based number of the first line starting with `prefix`. */
const lineOf = (lines: string[], prefix: string) => lines.findIndex((l) => l.startsWith(prefix)) + 1;

describe('refused statements name the line', () => {
  it('not this format: another first line, an empty file, a binary file without line breaks', () => {
    expect(refuse(['', '', 'ВерсияФормата=1.03', ...statementLines().slice(1)])).toMatchObject({ reason: 'not_a_statement', line: 3 });
    expect(refusal(() => parseStatementBuffer(Buffer.alloc(0)))).toMatchObject({ reason: 'not_a_statement', line: 1 });
    expect(refusal(() => parseStatementBuffer(Buffer.from('\n\n  \n')))).toMatchObject({ reason: 'not_a_statement', line: 3 });
    const binary = Buffer.alloc(200_000, 0x9f);
    binary.write('%PDF-1.7', 0, 'latin1');
    expect(refusal(() => parseStatementBuffer(binary))).toMatchObject({ reason: 'not_a_statement', line: 1 });
    expect(refuse(['1CClientBankExchange2', 'КонецФайла'])).toMatchObject({ reason: 'not_a_statement', line: 1 });
  });

  it('a section left open: at КонецФайла and at the end of the input', () => {
    const lines = statementLines();
    const withoutEnd = lines.filter((l) => l !== 'КонецДокумента');
    expect(refuse(withoutEnd)).toMatchObject({ reason: 'section_not_closed', line: lineOf(lines, 'СекцияДокумент') });
    const cut = lines.slice(0, lineOf(lines, 'Сумма='));
    const e = refuse(cut);
    expect(e).toMatchObject({ reason: 'section_not_closed', line: lineOf(lines, 'СекцияДокумент') });
    expect(e.message).toBe(`line ${lineOf(lines, 'СекцияДокумент')}: СекцияДокумент is not closed by КонецДокумента`);
  });

  it('a section inside a section, and a section end that closes nothing or the other kind', () => {
    const lines = statementLines({ documents: [{}, {}] });
    const second = lines.indexOf('СекцияДокумент=Платежное поручение', lineOf(lines, 'СекцияДокумент')) + 1;
    const nested = lines.filter((_, i) => i !== second - 2); // drop the first КонецДокумента
    expect(refuse(nested)).toMatchObject({ reason: 'nested_section', line: second - 1 });
    const extraEnd = edited((l) => [...l.slice(0, -1), 'КонецДокумента', 'КонецФайла']);
    expect(refuse(extraEnd)).toMatchObject({ reason: 'unexpected_section_end', line: extraEnd.length - 1 });
    const wrongEnd = edited((l) => l.map((x) => (x === 'КонецДокумента' ? 'КонецРасчСчет' : x)));
    expect(refuse(wrongEnd)).toMatchObject({ reason: 'unexpected_section_end', line: lineOf(wrongEnd, 'КонецФайла') - 1 });
  });

  it('КонецФайла missing: the last line', () => {
    const lines = statementLines().slice(0, -1);
    expect(refuse(lines)).toMatchObject({ reason: 'missing_end_of_file', line: lines.length });
  });

  it('an unreadable amount, on its line', () => {
    for (const bad of ['', '12 354.00', '12,345.00', '840.555', '-5', '+5', '1e3', '5.', '.5', 'сто', '1234567890123456']) {
      const lines = statementLines({ documents: [{ amount: bad }] });
      expect(refuse(lines), bad).toMatchObject({ reason: 'invalid_amount', line: lineOf(lines, 'Сумма=') });
    }
    const balance = edited((l) => l.map((x) => (x.startsWith('КонечныйОстаток=') ? 'КонечныйОстаток=1.234' : x)));
    expect(refuse(balance)).toMatchObject({ reason: 'invalid_amount', line: lineOf(balance, 'КонечныйОстаток=') });
  });

  it('an unreadable or impossible date, on its line', () => {
    for (const bad of ['31.02.2026', '29.02.2025', '2026-01-12', '1.1.2026', '00.01.2026', '12.13.2026', '12.01.26']) {
      const lines = statementLines({ documents: [{ date: bad }] });
      expect(refuse(lines), bad).toMatchObject({ reason: 'invalid_date', line: lineOf(lines, 'Дата=') });
      const received = statementLines({ documents: [{ received: bad }] });
      expect(refuse(received), bad).toMatchObject({ reason: 'invalid_date', line: lineOf(received, 'ДатаПоступило=') });
    }
    const header = edited((l) => l.map((x) => (x === 'ДатаНачала=01.01.2026' ? 'ДатаНачала=32.01.2026' : x)));
    expect(refuse(header)).toMatchObject({ reason: 'invalid_date', line: lineOf(header, 'ДатаНачала=') });
    expect(parseStatementBuffer(encodeLines(statementLines({ documents: [{ date: '29.02.2024' }] }))).documents[0]!.date).toBe('2024-02-29');
  });

  it('a document without Сумма or without any date, an account section without РасчСчет', () => {
    const noSum = edited((l) => l.filter((x) => !x.startsWith('Сумма=')));
    expect(refuse(noSum)).toMatchObject({ reason: 'missing_amount', line: lineOf(noSum, 'СекцияДокумент') });
    const noDate = edited((l) => l.filter((x) => !/^Дата(|Поступило|Списано)=/.test(x)));
    expect(refuse(noDate)).toMatchObject({ reason: 'missing_date', line: lineOf(noDate, 'СекцияДокумент') });
    const noAccount = edited((l) => l.filter((x, i) => !(x.startsWith('РасчСчет=') && i > lineOf(l, 'СекцияРасчСчет'))));
    expect(refuse(noAccount)).toMatchObject({ reason: 'missing_account', line: lineOf(noAccount, 'СекцияРасчСчет') });
  });

  it('lines, keys and values past their bounds', () => {
    const long = edited((l) => [...l.slice(0, 5), `Комментарий=${'я'.repeat(STATEMENT_LIMITS.maxLineChars)}`, ...l.slice(5)]);
    expect(refuse(long)).toMatchObject({ reason: 'line_too_long', line: 6 });
    expect(refuse(long, 'utf-8')).toMatchObject({ reason: 'line_too_long', line: 6 });
    const value = edited((l) => [...l.slice(0, 5), `Комментарий=${'я'.repeat(STATEMENT_LIMITS.maxValueChars + 1)}`, ...l.slice(5)]);
    expect(refuse(value)).toMatchObject({ reason: 'value_too_long', line: 6 });
    const key = edited((l) => [...l.slice(0, 5), `${'Я'.repeat(STATEMENT_LIMITS.maxKeyChars + 1)}=1`, ...l.slice(5)]);
    expect(refuse(key)).toMatchObject({ reason: 'key_too_long', line: 6 });
    const atBound = edited((l) => [...l.slice(0, 5), `Комментарий=${'я'.repeat(STATEMENT_LIMITS.maxValueChars)}`, ...l.slice(5)]);
    expect(parseStatementBuffer(encodeLines(atBound)).header['Комментарий']).toHaveLength(STATEMENT_LIMITS.maxValueChars);
  });

  it('too many documents, fields, header lines or accounts', () => {
    const minimal = ['СекцияДокумент=Банковский ордер', 'Сумма=1', 'Дата=01.01.2026', 'КонецДокумента'];
    const many = ['1CClientBankExchange', 'ВерсияФормата=1.03', ...Array.from({ length: STATEMENT_LIMITS.maxDocuments + 1 }, () => minimal).flat(), 'КонецФайла'];
    expect(refuse(many)).toMatchObject({ reason: 'too_many_documents', line: 3 + 4 * STATEMENT_LIMITS.maxDocuments });
    const fields = statementLines({ documents: [{ extra: Array.from({ length: STATEMENT_LIMITS.maxFieldsPerSection }, (_, i) => `Ключ${i}=`) }] });
    expect(refuse(fields).reason).toBe('too_many_fields');
    const header = edited((l) => [...l.slice(0, 5), ...Array.from({ length: STATEMENT_LIMITS.maxHeaderEntries }, () => 'Документ=Платежное поручение'), ...l.slice(5)]);
    expect(refuse(header).reason).toBe('too_many_header_entries');
    const accounts = edited((l) => [...l.slice(0, 5), ...Array.from({ length: STATEMENT_LIMITS.maxAccounts + 1 }, (_, i) => `РасчСчет=4070281000000000${String(i).padStart(4, '0')}`), ...l.slice(5)]);
    expect(refuse(accounts)).toMatchObject({ reason: 'too_many_accounts', line: 6 + STATEMENT_LIMITS.maxAccounts });
  });

  it('a file past 5 MB is refused without reading the rest of the stream', async () => {
    let pulled = 0; // pieces of 100 × 1002 bytes: 5 MiB (5,242,880 bytes) is passed at the 53rd
    async function* body() {
      yield encodeLines(statementLines().slice(0, -1));
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield encodeLines(Array.from({ length: 100 }, () => ' '.repeat(1000))); // blank lines: no other bound applies
      }
    }
    const error = await parseStatement(body()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StatementError);
    expect((error as StatementError).reason).toBe('too_large');
    expect(pulled).toBe(53);
  });

  it('a document in a broken file is never half-read: the whole file is refused', () => {
    const lines = [...statementLines({ documents: [{}, {}] }).slice(0, -1), ...documentLines({ amount: 'x' }), 'КонецФайла'];
    expect(refuse(lines).reason).toBe('invalid_amount');
  });
});

describe('statement values', () => {
  it('reads amounts to exact kopecks', () => {
    const cases: Array<[string, bigint]> = [['840', 84000n], ['840.5', 84050n], ['12354.00', 1235400n], ['1,5', 150n], ['0.01', 1n], ['0', 0n], ['007.10', 710n], ['999999999999999.99', 99999999999999999n]];
    for (const [text, kopecks] of cases) expect(parseStatementAmount(text, 1, 'Сумма'), text).toBe(kopecks);
    expect(parseStatementBalance('-1,5', 1, 'НачальныйОстаток')).toBe(-150n);
    expect(() => parseStatementAmount('-1.5', 7, 'Сумма')).toThrow('line 7: Сумма is not an amount: "-1.5"');
  });

  it('reads dates as calendar dates', () => {
    expect(parseStatementDate('01.01.2026', 1, 'Дата')).toBe('2026-01-01');
    expect(parseStatementDate('29.02.2000', 1, 'Дата')).toBe('2000-02-29');
    expect(() => parseStatementDate('29.02.1900', 9, 'Дата')).toThrow('line 9: Дата is not a date dd.mm.yyyy: "29.02.1900"');
    expect(() => parseStatementDate('31.04.2026', 1, 'Дата')).toThrow(StatementError);
  });
});
