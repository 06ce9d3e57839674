import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_NUMBER_CHARS, MAX_PURPOSE_TOKENS, isNamedBy, numberMatchKey, purposeTokens } from '../../../src/modules/payments/index.js';

describe('the whole-token rule: the contract’s examples', () => {
  it('СЧ-15 is named by «Оплата по счёту №сч-15 от 10.01.2026» and by «счет СЧ-15.»', () => {
    expect(isNamedBy('СЧ-15', 'Оплата по счёту №сч-15 от 10.01.2026')).toBe(true);
    expect(isNamedBy('СЧ-15', 'счет СЧ-15.')).toBe(true);
  });

  it('СЧ-15 is not named by «СЧ-150», «АСЧ-15» or «СЧ-15.1»', () => {
    expect(isNamedBy('СЧ-15', 'Оплата по счету СЧ-150')).toBe(false);
    expect(isNamedBy('СЧ-15', 'Оплата по счету АСЧ-15')).toBe(false);
    expect(isNamedBy('СЧ-15', 'Оплата по счету СЧ-15.1')).toBe(false);
  });
});

describe('the whole-token rule: more cases', () => {
  const named: Array<[string, string]> = [
    ['15', 'Оплата по счету 15 от 10.01.2026'],
    ['СЧ-15', '(СЧ-15)'],
    ['СЧ-15', 'счета СЧ-14,СЧ-15;СЧ-16'],
    ['СЧ-15', 'по счету «СЧ-15»'],
    ['СЧ-15', 'СЧ-15. Сумма 100'],
    ['СЧ-15', 'СЧ-15.\tНДС'],
    ['2026/15', 'Оплата 2026/15 от 10.01.2026'],
    ['A_15', 'оплата a_15'],
    ['INV-15', 'Payment for inv-15'],
    ['Ёж-1', 'оплата ёж-1'],
    ['10.01.2026', 'Оплата по счету от 10.01.2026'],
  ];
  for (const [number, purpose] of named) {
    it(`${number} is named by ${JSON.stringify(purpose)}`, () => expect(isNamedBy(number, purpose)).toBe(true));
  }

  const notNamed: Array<[string, string]> = [
    ['15', 'Оплата по сч.15, без НДС'], // «сч.15» is one token: the «.» is followed by «1»
    ['15', 'Оплата 15.01 руб'],
    ['15', 'Оплата 15/1'],
    ['15', 'Оплата 15_2'],
    ['15', 'Оплата 1-15'],
    ['СЧ-15', 'СЧ-15.,'], // a «.» followed by «,» stays in the token
    ['СЧ-15', 'СЧ-15..'],
    ['Ёж-1', 'оплата еж-1'], // ё and е are different letters
    ['Еж-1', 'оплата ёж-1'],
    ['СЧ 15', 'Оплата СЧ 15'], // a number with a space is never one token
    ['№15', 'Оплата №15'],
    ['15.', 'Оплата 15.'],
    ['', 'Оплата'],
  ];
  for (const [number, purpose] of notNamed) {
    it(`${JSON.stringify(number)} is not named by ${JSON.stringify(purpose)}`, () => expect(isNamedBy(number, purpose)).toBe(false));
  }

  it('compares in NFC and Unicode lower case', () => {
    const decomposed = 'и\u0306'; // «й» as «и» + combining breve
    expect(isNamedBy('СЧ-Й1', `Оплата сч-${decomposed}1`)).toBe(true);
    expect(isNamedBy('ΣΧ-1', 'πληρωμή σχ-1')).toBe(true);
    expect(numberMatchKey('СЧ-Ё1')).toBe('сч-ё1');
  });
});

describe('purposeTokens: what the storage looks documents up by', () => {
  it('gives the distinct lower-cased tokens in order', () => {
    expect(purposeTokens('Оплата по счёту №СЧ-15 от 10.01.2026. Оплата по СЧ-15.')).toEqual(['оплата', 'по', 'счёту', 'сч-15', 'от', '10.01.2026']);
  });

  it('is bounded: at most 128 distinct tokens, none longer than a number can be', () => {
    const purpose = Array.from({ length: 500 }, (_, i) => `т${i}`).join(' ');
    expect(purposeTokens(purpose)).toHaveLength(MAX_PURPOSE_TOKENS);
    expect(purposeTokens(`${'a'.repeat(MAX_NUMBER_CHARS + 1)} b`)).toEqual(['b']);
  });

  const tokenChar = fc.constantFrom(...'абвгдеёжзийСЧABCxyz0123456789-/_.');
  const numberArb = fc
    .string({ unit: tokenChar, minLength: 1, maxLength: 12 })
    .filter((n) => !n.endsWith('.'));
  const separator = fc.constantFrom(' ', ', ', ';', '(', ')', '«', '»', '№', '\t', ' — ', ':', '"');
  const text = fc.string({ unit: fc.constantFrom(...'оплата по счету от НДС 0123 '), maxLength: 20 });

  it('property: a number between separators is named, also in another case', () => {
    fc.assert(
      fc.property(numberArb, text, separator, separator, text, fc.boolean(), (number, before, sep1, sep2, after, upper) => {
        const written = upper ? number.toUpperCase() : number.toLowerCase();
        const purpose = `${before}${sep1}${written}${sep2}${after}`;
        expect(isNamedBy(number, purpose)).toBe(true);
        expect(purposeTokens(purpose)).toContain(numberMatchKey(number));
      }),
    );
  });

  it('property: a number glued to another token character is not named there', () => {
    fc.assert(
      fc.property(numberArb, fc.constantFrom(...'аяZ09-/_'), fc.boolean(), (number, glue, atStart) => {
        const purpose = atStart ? `оплата ${glue}${number} ` : `оплата ${number}${glue} `;
        expect(isNamedBy(number, purpose)).toBe(false);
      }),
    );
  });

  it('property: isNamedBy agrees with the token list for any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 60 }), (number, purpose) => {
        expect(isNamedBy(number, purpose)).toBe(number !== '' && purposeTokens(purpose).includes(numberMatchKey(number)));
      }),
    );
  });
});
