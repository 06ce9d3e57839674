/**
 * Russian plural forms after a number: the form follows the last two digits (11–14 take the
 * "many" form) and then the last digit: 1 день, 2 дня, 5 дней, 11 дней, 21 день, 112 дней.
 */

/** The forms for 1 / 2–4 / 5–0 and 11–14: `['день', 'дня', 'дней']`. */
export type RuPluralForms = readonly [one: string, few: string, many: string];

/** The form for the integer `n` (its sign does not matter: −1 день). */
export function pluralFormRu(n: number, forms: RuPluralForms): string {
  if (!Number.isSafeInteger(n)) throw new RangeError(`${n} is not an integer`);
  const n100 = Math.abs(n) % 100;
  const n10 = n100 % 10;
  if (n100 >= 11 && n100 <= 14) return forms[2];
  if (n10 === 1) return forms[0];
  if (n10 >= 2 && n10 <= 4) return forms[1];
  return forms[2];
}

export const DAY_FORMS_RU: RuPluralForms = ['день', 'дня', 'дней'];

/** "1 день", "2 дня", "5 дней", "21 день". */
export function countDaysRu(n: number): string {
  return `${n} ${pluralFormRu(n, DAY_FORMS_RU)}`;
}
