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
 *
 * Amounts below 10^18 (up to the quadrillions) are spelled here (`spelledOut`), word for word
 * as number-to-words-ru writes them (a property test compares the two over random amounts of
 * every length); the library spells the rest. The library takes 130–250 µs a call (option
 * merging, structured clones, regular expressions) against 1–7 µs here, and was 3.2–3.5 % of a
 * create's and a PUT's CPU (docs/performance.md).
 */
import numberToWordsRu from 'number-to-words-ru';
import { Decimal, fixed2 } from '../../../shared/money.js';

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

/** The same text from number-to-words-ru alone: the reference the property test holds `spelledOut` to. */
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

/** Forms for 1 / 2–4 / 5–0 (and 11–14). */
type Forms = readonly [string, string, string];

const CURRENCY_FORMS: Record<string, { integer: Forms; fraction: Forms }> = {
  RUB: { integer: ['рубль', 'рубля', 'рублей'], fraction: ['копейка', 'копейки', 'копеек'] },
  USD: { integer: ['доллар', 'доллара', 'долларов'], fraction: ['цент', 'цента', 'центов'] },
  EUR: { integer: ['евро', 'евро', 'евро'], fraction: ['евроцент', 'евроцента', 'евроцентов'] },
  CNY: { integer: ['юань', 'юаня', 'юаней'], fraction: ['фэнь', 'фэня', 'фэней'] },
  KZT: { integer: ['тенге', 'тенге', 'тенге'], fraction: ['тиын', 'тиына', 'тиынов'] },
  BYN: {
    integer: ['белорусский рубль', 'белорусских рубля', 'белорусских рублей'],
    fraction: ['копейка', 'копейки', 'копеек'],
  },
};

const ONES_MASCULINE = ['', 'один', 'два', 'три', 'четыре', 'пять', 'шесть', 'семь', 'восемь', 'девять'];
const ONES_FEMININE = ['', 'одна', 'две', 'три', 'четыре', 'пять', 'шесть', 'семь', 'восемь', 'девять'];
const TEENS = ['десять', 'одиннадцать', 'двенадцать', 'тринадцать', 'четырнадцать', 'пятнадцать', 'шестнадцать', 'семнадцать', 'восемнадцать', 'девятнадцать'];
const TENS = ['', '', 'двадцать', 'тридцать', 'сорок', 'пятьдесят', 'шестьдесят', 'семьдесят', 'восемьдесят', 'девяносто'];
const HUNDREDS = ['', 'сто', 'двести', 'триста', 'четыреста', 'пятьсот', 'шестьсот', 'семьсот', 'восемьсот', 'девятьсот'];

/** Groups of three digits from the thousands up; index 1 = thousands (feminine). */
const SCALES: readonly Forms[] = [
  ['', '', ''],
  ['тысяча', 'тысячи', 'тысяч'],
  ['миллион', 'миллиона', 'миллионов'],
  ['миллиард', 'миллиарда', 'миллиардов'],
  ['триллион', 'триллиона', 'триллионов'],
  ['квадриллион', 'квадриллиона', 'квадриллионов'],
];

function form(n: number, forms: Forms): string {
  const n100 = n % 100;
  const n10 = n % 10;
  if (n100 >= 11 && n100 <= 14) return forms[2];
  if (n10 === 1) return forms[0];
  if (n10 >= 2 && n10 <= 4) return forms[1];
  return forms[2];
}

/** 1–999 in words, into `out`. */
function group(n: number, feminine: boolean, out: string[]): void {
  const h = Math.floor(n / 100);
  const rest = n % 100;
  if (h > 0) out.push(HUNDREDS[h] as string);
  if (rest >= 10 && rest < 20) {
    out.push(TEENS[rest - 10] as string);
    return;
  }
  const t = Math.floor(rest / 10);
  const o = rest % 10;
  if (t > 0) out.push(TENS[t] as string);
  if (o > 0) out.push((feminine ? ONES_FEMININE : ONES_MASCULINE)[o] as string);
}

const FIXED = /^(-?)(0|[1-9]\d{0,17})\.(\d\d)$/;

/**
 * "Девятнадцать тысяч … рублей 99 копеек" for a fixed-point amount ("-1234.50": no leading
 * zeros, exactly two decimals, as `fixed2` writes it); null when out of this function's range.
 */
function spelledOut(fixed: string, currency: string): string | null {
  const m = FIXED.exec(fixed);
  const forms = Object.hasOwn(CURRENCY_FORMS, currency) ? CURRENCY_FORMS[currency] : undefined;
  if (m === null || forms === undefined) return null;
  const [, minus, integer, fraction] = m as unknown as [string, string, string, string];
  const words: string[] = [];
  if (minus !== '') words.push('минус');
  if (integer === '0') {
    words.push('ноль');
  } else {
    const groups = Math.ceil(integer.length / 3);
    const padded = integer.padStart(groups * 3, '0');
    for (let g = 0; g < groups; g++) {
      const value = Number(padded.slice(g * 3, g * 3 + 3));
      if (value === 0) continue;
      const scale = groups - 1 - g;
      group(value, scale === 1, words);
      if (scale > 0) words.push(form(value, SCALES[scale] as Forms));
    }
  }
  // The unit follows the last three digits (…011 рублей, …021 рубль); zero takes the plural.
  words.push(form(Number(integer.slice(-3)), forms.integer));
  words.push(fraction, form(Number(fraction), forms.fraction));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}
