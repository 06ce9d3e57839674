/**
 * Builds 1CClientBankExchange statements for the tests: lines of text, then bytes through a
 * real encoder (iconv-lite) in the encoding and line ending under test.
 */
import iconv from 'iconv-lite';
import { StatementError } from '../../../src/modules/payments/index.js';

export const OWN_ACCOUNT = '40702810938000000001';
export const OWN_BIK = '044525225';
export const OWN_INN = '7707083893';

export type Encoding = 'utf-8' | 'utf-8-bom' | 'windows-1251' | 'cp866';

/** Lines → bytes: joined by `eol` (and ended by it), encoded. */
export function encodeLines(lines: readonly string[], encoding: Encoding = 'windows-1251', eol = '\r\n'): Buffer {
  const text = lines.join(eol) + eol;
  if (encoding === 'utf-8') return Buffer.from(text, 'utf8');
  if (encoding === 'utf-8-bom') return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
  return iconv.encode(text, encoding);
}

export interface DocumentSpec {
  kind?: string;
  number?: string;
  date?: string;
  amount?: string;
  payerAccount?: string;
  payerInn?: string;
  payerName?: string;
  recipientAccount?: string;
  recipientInn?: string;
  recipientName?: string;
  received?: string;
  writtenOff?: string;
  purpose?: string;
  /** Extra key=value lines at the end of the section. */
  extra?: string[];
}

/** A `СекцияДокумент … КонецДокумента` block; an incoming payment to OWN_ACCOUNT by default. */
export function documentLines(d: DocumentSpec = {}): string[] {
  return [
    `СекцияДокумент=${d.kind ?? 'Платежное поручение'}`,
    `Номер=${d.number ?? '101'}`,
    `Дата=${d.date ?? '12.01.2026'}`,
    `Сумма=${d.amount ?? '12354.00'}`,
    `ПлательщикСчет=${d.payerAccount ?? '40702810400000012345'}`,
    `Плательщик=ИНН ${d.payerInn ?? '7701234567'} ${d.payerName ?? 'ООО "Покупатель"'}`,
    `ПлательщикИНН=${d.payerInn ?? '7701234567'}`,
    `Плательщик1=${d.payerName ?? 'ООО "Покупатель"'}`,
    'ПлательщикКПП=770101001',
    'ПлательщикБанк1=АО "АЛЬФА-БАНК"',
    'ПлательщикБИК=044525593',
    'ПлательщикКорсчет=30101810200000000593',
    `ПолучательСчет=${d.recipientAccount ?? OWN_ACCOUNT}`,
    `ПолучательИНН=${d.recipientInn ?? OWN_INN}`,
    `Получатель1=${d.recipientName ?? 'ООО "Ромашка"'}`,
    'ПолучательКПП=770701001',
    'ПолучательБанк1=ПАО СБЕРБАНК',
    `ПолучательБИК=${OWN_BIK}`,
    'ПолучательКорсчет=30101810400000000225',
    'ВидОплаты=01',
    'Очередность=5',
    `ДатаПоступило=${d.received ?? '12.01.2026'}`,
    `ДатаСписано=${d.writtenOff ?? ''}`,
    `НазначениеПлатежа=${d.purpose ?? 'Оплата по счету №СЧ-1 от 10.01.2026. В т.ч. НДС 22%'}`,
    ...(d.extra ?? []),
    'КонецДокумента',
  ];
}

export interface StatementSpec {
  version?: string;
  encodingLabel?: string;
  accounts?: Array<{ account: string; opening: string; received: string; writtenOff: string; closing: string }>;
  documents?: DocumentSpec[];
  headerExtra?: string[];
}

/** A whole statement: header, account sections, documents, `КонецФайла`. */
export function statementLines(s: StatementSpec = {}): string[] {
  const accounts = s.accounts ?? [{ account: OWN_ACCOUNT, opening: '1000.00', received: '12354.00', writtenOff: '0', closing: '13354.00' }];
  const documents = s.documents ?? [{}];
  return [
    '1CClientBankExchange',
    `ВерсияФормата=${s.version ?? '1.03'}`,
    `Кодировка=${s.encodingLabel ?? 'Windows'}`,
    'Отправитель=СберБизнес',
    'Получатель=Бухгалтерский учет',
    'ДатаСоздания=13.01.2026',
    'ВремяСоздания=09:15:00',
    'ДатаНачала=01.01.2026',
    'ДатаКонца=31.01.2026',
    ...accounts.map((a) => `РасчСчет=${a.account}`),
    'Документ=Платежное поручение',
    'Документ=Банковский ордер',
    ...(s.headerExtra ?? []),
    ...accounts.flatMap((a) => [
      'СекцияРасчСчет',
      'ДатаНачала=01.01.2026',
      'ДатаКонца=31.01.2026',
      `РасчСчет=${a.account}`,
      `НачальныйОстаток=${a.opening}`,
      `ВсегоПоступило=${a.received}`,
      `ВсегоСписано=${a.writtenOff}`,
      `КонечныйОстаток=${a.closing}`,
      'КонецРасчСчет',
    ]),
    ...documents.flatMap((d) => documentLines(d)),
    'КонецФайла',
  ];
}

/** The StatementError a parse throws (fails the test when it does not throw one). */
export function refusal(parse: () => unknown): StatementError {
  try {
    parse();
  } catch (error) {
    if (error instanceof StatementError) return error;
    throw error;
  }
  throw new Error('the statement was not refused');
}
