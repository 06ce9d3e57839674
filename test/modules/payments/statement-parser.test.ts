import { describe, expect, it } from 'vitest';
import { parseStatement, parseStatementBuffer } from '../../../src/modules/payments/index.js';
import { OWN_ACCOUNT, documentLines, encodeLines, statementLines } from './statement-builder.js';

const parse = (lines: string[], encoding: Parameters<typeof encodeLines>[1] = 'windows-1251', eol = '\r\n') =>
  parseStatementBuffer(encodeLines(lines, encoding, eol));

describe('parseStatement: a typical statement', () => {
  const statement = parse(statementLines());

  it('reads the header, keeping every key and repeated ones as arrays', () => {
    expect(statement.format_version).toBe('1.03');
    expect(statement.encoding).toBe('windows-1251');
    expect(statement.sender).toBe('СберБизнес');
    expect(statement.date_from).toBe('2026-01-01');
    expect(statement.date_to).toBe('2026-01-31');
    expect(statement.header['ВремяСоздания']).toBe('09:15:00');
    expect(statement.header['Получатель']).toBe('Бухгалтерский учет');
    expect(statement.header['Документ']).toEqual(['Платежное поручение', 'Банковский ордер']);
    expect(statement.header['РасчСчет']).toBe(OWN_ACCOUNT);
    expect(statement.warnings).toEqual([]);
  });

  it('reads the account section as exact kopecks', () => {
    expect(statement.accounts).toEqual([
      { account: OWN_ACCOUNT, line: 13, date_from: '2026-01-01', date_to: '2026-01-31', opening_balance: 100000n, received_total: 1235400n, written_off_total: 0n, closing_balance: 1335400n },
    ]);
  });

  it('reads a document: parties, dates, amount, purpose, every field kept', () => {
    expect(statement.documents).toHaveLength(1);
    const doc = statement.documents[0]!;
    expect(doc).toMatchObject({
      kind: 'Платежное поручение',
      line: 22,
      number: '101',
      date: '2026-01-12',
      amount: 1235400n,
      received_date: '2026-01-12',
      written_off_date: null,
      purpose: 'Оплата по счету №СЧ-1 от 10.01.2026. В т.ч. НДС 22%',
      payer: { name: 'ООО "Покупатель"', inn: '7701234567', kpp: '770101001', account: '40702810400000012345', bik: '044525593', bank_name: 'АО "АЛЬФА-БАНК"' },
      recipient: { name: 'ООО "Ромашка"', inn: '7707083893', kpp: '770701001', account: OWN_ACCOUNT, bik: '044525225', bank_name: 'ПАО СБЕРБАНК' },
    });
    expect(doc.fields['ПлательщикКорсчет']).toBe('30101810200000000593');
    expect(doc.fields['ВидОплаты']).toBe('01');
    expect(doc.fields['ДатаСписано']).toBe('');
    expect(Object.keys(doc.fields)).toHaveLength(23);
    expect(statement.line_count).toBe(47);
  });
});

describe('parseStatement: the format’s variations', () => {
  it('reads 1.02 as 1.03, with LF line ends, and warns on another version', () => {
    expect(parse(statementLines({ version: '1.02' }), 'windows-1251', '\n').format_version).toBe('1.02');
    const other = parse(statementLines({ version: '2.00' }));
    expect(other.documents).toHaveLength(1);
    expect(other.warnings).toEqual([{ code: 'unknown_format_version', line: 2, message: expect.stringContaining('2.00') }]);
    const none = parse(statementLines().filter((l) => !l.startsWith('ВерсияФормата')));
    expect(none.format_version).toBeNull();
    expect(none.warnings.map((w) => w.code)).toEqual(['format_version_missing']);
  });

  it('keeps empty values and unknown keys, in the header and in documents', () => {
    const s = parse(statementLines({ headerExtra: ['НовыйКлюч=значение', 'ПустойКлюч='], documents: [{ extra: ['КодНазПлатежа=', 'ИдентификаторПлатежа=abc=def'] }] }));
    expect(s.header['НовыйКлюч']).toBe('значение');
    expect(s.header['ПустойКлюч']).toBe('');
    expect(s.documents[0]!.fields['КодНазПлатежа']).toBe('');
    expect(s.documents[0]!.fields['ИдентификаторПлатежа']).toBe('abc=def');
  });

  it('prefers …РасчСчет over …Счет, in either order, and falls back to …Счет when it is empty', () => {
    const lines = documentLines({ payerAccount: '30101810400000000225' });
    const s = parse(statementLines({ documents: [] }).flatMap((l) =>
      l === 'КонецФайла' ? [...lines.slice(0, 4), 'ПлательщикРасчСчет=40702810500000099999', 'ПолучательРасчСчет=', ...lines.slice(4), l] : [l]));
    expect(s.documents[0]!.payer.account).toBe('40702810500000099999');
    expect(s.documents[0]!.recipient.account).toBe(OWN_ACCOUNT);
  });

  it('takes the name from Плательщик without a leading «ИНН nnn» only when Плательщик1 is absent', () => {
    const lines = documentLines().filter((l) => !l.startsWith('Плательщик1=') && !l.startsWith('Получатель1='));
    const withPlain = [...lines.slice(0, -1), 'Получатель=ИНН 7707083893 КПП 770701001 ООО "Ромашка"', 'КонецДокумента'];
    const s = parse(statementLines({ documents: [] }).flatMap((l) => (l === 'КонецФайла' ? [...withPlain, l] : [l])));
    expect(s.documents[0]!.payer.name).toBe('ООО "Покупатель"');
    expect(s.documents[0]!.recipient.name).toBe('ООО "Ромашка"');
  });

  it('treats INN and KPP 0 as absent', () => {
    const s = parse(statementLines({ documents: [{ payerInn: '0' }] }));
    expect(s.documents[0]!.payer.inn).toBeNull();
  });

  it('joins НазначениеПлатежа1…6 with single spaces when НазначениеПлатежа is empty', () => {
    const doc = documentLines({ purpose: '' });
    const parts = ['НазначениеПлатежа1=Оплата по счету', 'НазначениеПлатежа2=', 'НазначениеПлатежа3=СЧ-15 от 10.01.2026', 'НазначениеПлатежа6=Без НДС'];
    const s = parse(statementLines({ documents: [] }).flatMap((l) => (l === 'КонецФайла' ? [...doc.slice(0, -1), ...parts, 'КонецДокумента', l] : [l])));
    expect(s.documents[0]!.purpose).toBe('Оплата по счету СЧ-15 от 10.01.2026 Без НДС');
    const both = parse(statementLines({ documents: [{ purpose: 'Целиком', extra: ['НазначениеПлатежа1=Часть'] }] }));
    expect(both.documents[0]!.purpose).toBe('Целиком');
  });

  it('reads every document kind: acquiring and SBP credits by bank order, memorial orders', () => {
    const s = parse(statementLines({
      documents: [
        { kind: 'Банковский ордер', number: '7001', payerInn: '7707083893', payerName: 'ПАО СБЕРБАНК', amount: '9850,25', purpose: 'Зачисление средств по операциям эквайринга. Мерчант №123. Комиссия 149.75' },
        { kind: 'Банковский ордер', number: '7002', amount: '1500', purpose: 'Перевод по СБП от Иван Иванович И. Оплата по счету СЧ-3' },
        { kind: 'Мемориальный ордер', number: '55', amount: '840.5', payerAccount: OWN_ACCOUNT, recipientAccount: '70601810400002740201', writtenOff: '15.01.2026', received: '' },
        { kind: 'Платежное требование', amount: '1' },
        { kind: 'Инкассовое поручение', amount: '0.01' },
      ],
    }));
    expect(s.documents.map((d) => [d.kind, d.amount])).toEqual([
      ['Банковский ордер', 985025n],
      ['Банковский ордер', 150000n],
      ['Мемориальный ордер', 84050n],
      ['Платежное требование', 100n],
      ['Инкассовое поручение', 1n],
    ]);
    expect(s.documents[2]!.written_off_date).toBe('2026-01-15');
    expect(s.documents[2]!.received_date).toBeNull();
  });

  it('keeps repeated header accounts and merges several sections of one account', () => {
    const second = '40702810938000000002';
    const lines = statementLines({
      accounts: [
        { account: OWN_ACCOUNT, opening: '100', received: '50', writtenOff: '20', closing: '130' },
        { account: second, opening: '-10.5', received: '10.50', writtenOff: '0', closing: '0' },
        { account: OWN_ACCOUNT, opening: '130', received: '5', writtenOff: '0', closing: '135' },
      ],
    });
    const s = parse(lines);
    expect(s.header['РасчСчет']).toEqual([OWN_ACCOUNT, second, OWN_ACCOUNT]);
    expect(s.accounts.map((a) => [a.account, a.opening_balance, a.received_total, a.written_off_total, a.closing_balance])).toEqual([
      [OWN_ACCOUNT, 10000n, 5500n, 2000n, 13500n],
      [second, -1050n, 1050n, 0n, 0n],
    ]);
    expect(s.warnings).toEqual([]);
  });

  it('warns balance_mismatch for a section that does not add up, or that does not follow the previous one', () => {
    const s = parse(statementLines({
      accounts: [
        { account: OWN_ACCOUNT, opening: '100', received: '50', writtenOff: '20', closing: '131' },
        { account: OWN_ACCOUNT, opening: '130', received: '5', writtenOff: '0', closing: '135' },
      ],
    }));
    expect(s.warnings.map((w) => [w.code, w.line])).toEqual([['balance_mismatch', 14], ['balance_mismatch', 23]]);
    expect(s.warnings[0]!.message).toContain('= 130.00, not the closing 131.00');
    expect(s.documents).toHaveLength(1);
  });

  it('warns and goes on for a repeated key, a line without "=", a zero amount and lines after КонецФайла', () => {
    const lines = statementLines({ documents: [{ amount: '0.00', extra: ['Номер=102', 'СтраннаяСтрока'] }] });
    const s = parse([...lines, '', 'мусор после конца', 'ещё']);
    expect(s.documents[0]!.number).toBe('102');
    expect(s.warnings.map((w) => w.code)).toEqual(['repeated_key', 'unrecognized_line', 'zero_amount', 'content_after_end']);
    expect(s.warnings[3]!.line).toBe(lines.length + 2);
  });

  it('caps warnings at 100 and counts the rest', () => {
    const extra = Array.from({ length: 150 }, () => 'Номер=1');
    const s = parse(statementLines({ documents: [{ extra }] }));
    expect(s.warnings).toHaveLength(101);
    expect(s.warnings[100]).toMatchObject({ code: 'warnings_truncated', message: '50 more warnings not listed' });
  });

  it('accepts blank lines, surrounding spaces and lower-case marker', () => {
    const lines = statementLines().map((l) => (l.includes('=') ? `  ${l.replace('=', ' = ')}  ` : l));
    const s = parse(['', '  1cclientbankexchange  ', ...lines.slice(1).flatMap((l) => [l, ''])]);
    expect(s.documents[0]!.amount).toBe(1235400n);
    expect(s.sender).toBe('СберБизнес');
  });

  it('reads a statement from an async stream of chunks', async () => {
    const bytes = encodeLines(statementLines({ documents: [{}, { number: '102' }] }));
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 7) yield bytes.subarray(i, i + 7);
    }
    const s = await parseStatement(chunks());
    expect(s.documents.map((d) => d.number)).toEqual(['101', '102']);
    expect(s).toEqual(parseStatementBuffer(bytes));
  });
});
