/**
 * "Сумма прописью" for the invoice print form: the integer part in words, the minor units as
 * two digits, both with the unit name declined for the number ("… рублей 05 копеек").
 *
 * Unit names (nominative; forms for 1 / 2–4 / 5–0):
 * - RUB: рубль, рубля, рублей; копейка, копейки, копеек (library built-in).
 * - USD: доллар, доллара, долларов; цент, цента, центов (library built-in).
 * - EUR: евро (indeclinable, masculine); евроцент, евроцента, евроцентов: the official Russian
 *   name of the euro's minor unit, and what Russian accounting software prints.
 * - CNY: юань, юаня, юаней; фэнь, фэня, фэней (masculine; "фэнь" is the Palladius spelling).
 * - KZT: тенге (indeclinable, masculine: "один тенге"); тиын, тиына, тиынов.
 * - BYN: белорусский рубль, белорусских рубля, белорусских рублей; копейка, копейки, копеек.
 *   The adjective keeps a Belarusian invoice from reading as Russian rubles.
 */
import numberToWordsRu from 'number-to-words-ru';
import { Decimal, fixed2 } from '../../../shared/money.js';
import { spelledOut } from './amount-in-words.fast.js';

export const AMOUNT_IN_WORDS_CURRENCIES = ['RUB', 'USD', 'EUR', 'CNY', 'KZT', 'BYN'] as const;
export type AmountInWordsCurrency = (typeof AMOUNT_IN_WORDS_CURRENCIES)[number];

type ConvertOptions = NonNullable<Parameters<typeof numberToWordsRu.convert>[1]>;
type CurrencyOption = NonNullable<ConvertOptions['currency']>;

/** 0 = masculine (один, два), 1 = feminine (одна, две). */
const MASCULINE = 0;
const FEMININE = 1;

const CURRENCY_OPTIONS: Record<AmountInWordsCurrency, CurrencyOption> = {
  RUB: 'rub',
  USD: 'usd',
  EUR: {
    currencyNameCases: ['евро', 'евро', 'евро'],
    fractionalPartNameCases: ['евроцент', 'евроцента', 'евроцентов'],
    currencyNounGender: { integer: MASCULINE, fractionalPart: MASCULINE },
    fractionalPartMinLength: 2,
  },
  CNY: {
    currencyNameCases: ['юань', 'юаня', 'юаней'],
    fractionalPartNameCases: ['фэнь', 'фэня', 'фэней'],
    currencyNounGender: { integer: MASCULINE, fractionalPart: MASCULINE },
    fractionalPartMinLength: 2,
  },
  KZT: {
    currencyNameCases: ['тенге', 'тенге', 'тенге'],
    fractionalPartNameCases: ['тиын', 'тиына', 'тиынов'],
    currencyNounGender: { integer: MASCULINE, fractionalPart: MASCULINE },
    fractionalPartMinLength: 2,
  },
  BYN: {
    currencyNameCases: ['белорусский рубль', 'белорусских рубля', 'белорусских рублей'],
    fractionalPartNameCases: ['копейка', 'копейки', 'копеек'],
    currencyNounGender: { integer: MASCULINE, fractionalPart: FEMININE },
    fractionalPartMinLength: 2,
  },
};

const DECIMAL_LITERAL = /^[+-]?(?:\d+\.?\d*|\.\d+)$/;
const CANONICAL_FIXED2 = /^-?(?:0|[1-9]\d*)\.\d\d$/;

/**
 * Spells an amount out in Russian, first letter capitalised:
 * `amountInWords('19789.99', 'RUB')` → "Девятнадцать тысяч семьсот восемьдесят девять рублей 99 копеек".
 * The amount is a decimal string (as `computeTotals` returns); it is rounded half-up to two
 * decimals here, so the words always match the printed figure. Throws on a malformed amount
 * or an unsupported currency rather than printing something wrong on a payment document.
 */
export function amountInWords(amount: string, currency: AmountInWordsCurrency): string {
  const option = Object.hasOwn(CURRENCY_OPTIONS, currency) ? CURRENCY_OPTIONS[currency] : undefined;
  if (option === undefined) throw new Error(`amountInWords: unsupported currency ${JSON.stringify(currency)}`);
  if (typeof amount !== 'string' || !DECIMAL_LITERAL.test(amount.trim())) {
    throw new Error(`amountInWords: amount must be a decimal string, got ${JSON.stringify(amount)}`);
  }
  const trimmed = amount.trim();
  // computeTotals' strings are already in fixed2's form (no leading zeros, two decimals, no "-0.00").
  const fixed = CANONICAL_FIXED2.test(trimmed) && trimmed !== '-0.00' ? trimmed : fixed2(new Decimal(trimmed));
  return spelledOut(fixed, currency) ?? libraryWords(fixed, option);
}

/** The same text from number-to-words-ru alone (the reference `spelledOut` is tested against). */
export function amountInWordsByLibrary(amount: string, currency: AmountInWordsCurrency): string {
  return libraryWords(fixed2(new Decimal(amount.trim())), CURRENCY_OPTIONS[currency]);
}

function libraryWords(fixed: string, option: CurrencyOption): string {
  const words = numberToWordsRu.convert(fixed, {
    currency: option,
    declension: 'nominative',
    convertMinusSignToWord: true,
    showNumberParts: { integer: true, fractional: true },
    convertNumberToWords: { integer: true, fractional: false },
    showCurrency: { integer: true, fractional: true },
  });
  // The library capitalises already; keep the guarantee here in case it ever stops doing so.
  return words.charAt(0).toUpperCase() + words.slice(1);
}
