/**
 * The amount in words without the library (amount-in-words.ts): number-to-words-ru takes
 * 40–80 µs a call (option merging, structured clones, regular expressions), a few per cent of a
 * create's CPU, for text that follows a handful of rules. This covers amounts below 10^18 (up to
 * the quadrillions) in the six currencies, word for word as the library writes them (a property
 * test compares the two over random amounts of every length); anything else returns null and
 * goes to the library.
 */
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
export function spelledOut(fixed: string, currency: string): string | null {
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
