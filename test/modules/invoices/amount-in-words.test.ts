import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { amountInWords, amountInWordsByLibrary, type AmountInWordsCurrency } from '../../../src/modules/invoices/rules/amount-in-words.js';

describe('amountInWords: RUB', () => {
  it.each([
    ['19789.99', 'Девятнадцать тысяч семьсот восемьдесят девять рублей 99 копеек'],
    ['1.01', 'Один рубль 01 копейка'],
    ['2.00', 'Два рубля 00 копеек'],
    ['2', 'Два рубля 00 копеек'],
    ['3.02', 'Три рубля 02 копейки'],
    ['4.04', 'Четыре рубля 04 копейки'],
    ['5.05', 'Пять рублей 05 копеек'],
    ['11.11', 'Одиннадцать рублей 11 копеек'],
    ['12.12', 'Двенадцать рублей 12 копеек'],
    ['14.14', 'Четырнадцать рублей 14 копеек'],
    ['21.21', 'Двадцать один рубль 21 копейка'],
    ['22.22', 'Двадцать два рубля 22 копейки'],
    ['25.25', 'Двадцать пять рублей 25 копеек'],
    ['101.10', 'Сто один рубль 10 копеек'],
    ['111.00', 'Сто одиннадцать рублей 00 копеек'],
    ['1000.00', 'Одна тысяча рублей 00 копеек'],
    ['2000.00', 'Две тысячи рублей 00 копеек'],
    ['5000.00', 'Пять тысяч рублей 00 копеек'],
    ['21000.00', 'Двадцать одна тысяча рублей 00 копеек'],
    ['22000.00', 'Двадцать две тысячи рублей 00 копеек'],
    ['1000000.00', 'Один миллион рублей 00 копеек'],
    ['2000000.00', 'Два миллиона рублей 00 копеек'],
    ['5000000.00', 'Пять миллионов рублей 00 копеек'],
    ['1000000000.00', 'Один миллиард рублей 00 копеек'],
    ['1234567.89', 'Один миллион двести тридцать четыре тысячи пятьсот шестьдесят семь рублей 89 копеек'],
    ['0.00', 'Ноль рублей 00 копеек'],
    ['0.01', 'Ноль рублей 01 копейка'],
    ['0.5', 'Ноль рублей 50 копеек'],
  ])('%s → %s', (amount, expected) => {
    expect(amountInWords(amount, 'RUB')).toBe(expected);
  });

  it('rounds to kopecks half-up before spelling, so words match the printed figure', () => {
    expect(amountInWords('0.385', 'RUB')).toBe('Ноль рублей 39 копеек');
    expect(amountInWords('1.995', 'RUB')).toBe('Два рубля 00 копеек');
    expect(amountInWords('-0.001', 'RUB')).toBe('Ноль рублей 00 копеек');
  });

  it('keeps exactness beyond 2^53', () => {
    expect(amountInWords('12345678901234567.89', 'RUB')).toBe(
      'Двенадцать квадриллионов триста сорок пять триллионов шестьсот семьдесят восемь миллиардов ' +
        'девятьсот один миллион двести тридцать четыре тысячи пятьсот шестьдесят семь рублей 89 копеек',
    );
  });
});

describe('amountInWords: other currencies', () => {
  it.each<[AmountInWordsCurrency, string, string]>([
    ['USD', '1.01', 'Один доллар 01 цент'],
    ['USD', '2.02', 'Два доллара 02 цента'],
    ['USD', '1500.50', 'Одна тысяча пятьсот долларов 50 центов'],
    ['EUR', '1.01', 'Один евро 01 евроцент'],
    ['EUR', '22.03', 'Двадцать два евро 03 евроцента'],
    ['EUR', '1000.10', 'Одна тысяча евро 10 евроцентов'],
    ['CNY', '1.01', 'Один юань 01 фэнь'],
    ['CNY', '2.02', 'Два юаня 02 фэня'],
    ['CNY', '8952.41', 'Восемь тысяч девятьсот пятьдесят два юаня 41 фэнь'],
    ['CNY', '5.05', 'Пять юаней 05 фэней'],
    ['KZT', '1.01', 'Один тенге 01 тиын'],
    ['KZT', '2.02', 'Два тенге 02 тиына'],
    ['KZT', '150000.00', 'Сто пятьдесят тысяч тенге 00 тиынов'],
    ['BYN', '1.01', 'Один белорусский рубль 01 копейка'],
    ['BYN', '2.02', 'Два белорусских рубля 02 копейки'],
    ['BYN', '5.05', 'Пять белорусских рублей 05 копеек'],
    ['BYN', '21000.21', 'Двадцать одна тысяча белорусских рублей 21 копейка'],
  ])('%s %s → %s', (currency, amount, expected) => {
    expect(amountInWords(amount, currency)).toBe(expected);
  });

  it.each<AmountInWordsCurrency>(['RUB', 'USD', 'EUR', 'CNY', 'KZT', 'BYN'])('%s: zero reads "Ноль …"', (currency) => {
    expect(amountInWords('0.00', currency)).toMatch(/^Ноль /);
  });
});

describe('amountInWords: refusals', () => {
  it.each(['', 'abc', '1,50', 'NaN', 'Infinity', '0x10', '1e3', ' '])('throws on the malformed amount %j', (amount) => {
    expect(() => amountInWords(amount, 'RUB')).toThrow(/amount/);
  });

  it('throws on an unsupported currency instead of printing rubles', () => {
    expect(() => amountInWords('1.00', 'GBP' as AmountInWordsCurrency)).toThrow(/currency/);
    expect(() => amountInWords('1.00', 'toString' as AmountInWordsCurrency)).toThrow(/currency/);
  });
});

describe('amountInWords without the library: word for word what number-to-words-ru writes', () => {
  const currencies: AmountInWordsCurrency[] = ['RUB', 'USD', 'EUR', 'CNY', 'KZT', 'BYN'];

  it('agrees on chosen amounts (zeros, 11–14, feminine thousands, every scale, signs, rounding)', () => {
    const amounts = ['0', '0.00', '-0.00', '-0.001', '-0.01', '0.005', '1', '2.02', '4.99', '5', '10', '11.11', '14.14', '19', '20', '21.21', '99.99',
      '100', '101', '111', '112', '1000', '1001', '1011', '2000', '2021', '11000', '21000', '22000', '100000', '1000000', '1001000', '2002002',
      '11000000', '1000000000', '21000000000', '1000000000000', '1000000000000000', '3333333332999999.67', '999999999999999999.99',
      '1000000000000000000', '-112345678901234567.99', '012.50', '+3', '.5', '12.345'];
    for (const c of currencies) for (const a of amounts) expect(amountInWords(a, c), `${a} ${c}`).toBe(amountInWordsByLibrary(a, c));
  });

  it('agrees on random amounts of every length up to 20 digits', () => {
    fc.assert(
      fc.property(fc.constantFrom(...currencies), fc.boolean(), fc.stringMatching(/^[1-9]\d{0,19}$/), fc.stringMatching(/^\d{2}$/), (c, neg, int, frac) => {
        const a = `${neg ? '-' : ''}${int}.${frac}`;
        // Below 10^18 the text is this module's own, above it the library's: the same either way.
        expect(amountInWords(a, c)).toBe(amountInWordsByLibrary(a, c));
      }),
      { numRuns: 6_000 },
    );
    // Few non-zero digits: the zero groups and their scale words.
    fc.assert(
      fc.property(fc.constantFrom(...currencies), fc.integer({ min: 0, max: 17 }), fc.integer({ min: 1, max: 999 }), fc.integer({ min: 0, max: 21 }), (c, shift, head, tail) => {
        const a = `${String(head)}${'0'.repeat(shift)}`.slice(0, 18).replace(/\d{1,2}$/, (d) => String(tail).padStart(d.length, '0').slice(-d.length)) + '.00';
        expect(amountInWords(a, c)).toBe(amountInWordsByLibrary(a, c));
      }),
      { numRuns: 3_000 },
    );
  });
});
