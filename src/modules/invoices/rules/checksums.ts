/**
 * Check digits of Russian requisites: INN, KPP, OGRN, OGRNIP, BIK, bank accounts and EDO
 * participant ids. Pure predicates over strings: they never throw, never trim and answer
 * `false` for anything that is not a string of the right shape. Callers turn a `false` into
 * a validation warning; nothing here decides whether a document may be saved.
 */

const DIGITS = /^\d+$/;

function isDigits(value: unknown, length: number): value is string {
  return typeof value === 'string' && value.length === length && DIGITS.test(value);
}

/** Σ digit × weight over the leading digits of `s`, one weight per digit. */
function weightedSum(s: string, weights: readonly number[]): number {
  let sum = 0;
  weights.forEach((w, i) => {
    sum += Number(s.charAt(i)) * w;
  });
  return sum;
}

function innCheckDigit(s: string, weights: readonly number[]): number {
  return (weightedSum(s, weights) % 11) % 10;
}

const INN10_WEIGHTS = [2, 4, 10, 3, 5, 9, 4, 6, 8] as const;
const INN12_WEIGHTS_11 = [7, 2, 4, 10, 3, 5, 9, 4, 6, 8] as const;
const INN12_WEIGHTS_12 = [3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8] as const;

/**
 * INN of an organization (10 digits, one check digit) or of a person / sole proprietor
 * (12 digits, two check digits). Each check digit is (Σ digit × weight mod 11) mod 10.
 */
export function isValidInn(value: unknown): boolean {
  if (isDigits(value, 10)) {
    return innCheckDigit(value, INN10_WEIGHTS) === Number(value.charAt(9));
  }
  if (isDigits(value, 12)) {
    return (
      innCheckDigit(value, INN12_WEIGHTS_11) === Number(value.charAt(10)) &&
      innCheckDigit(value, INN12_WEIGHTS_12) === Number(value.charAt(11))
    );
  }
  return false;
}

const KPP = /^\d{4}[0-9A-Z]{2}\d{3}$/;

/** KPP has no check digit: 4 digits (tax office), 2 digits or capital Latin letters (reason), 3 digits. */
export function isValidKpp(value: unknown): boolean {
  return typeof value === 'string' && KPP.test(value);
}

/**
 * OGRN of an organization: 13 digits, the last one is (first 12 as a number mod 11) mod 10.
 * BigInt keeps the modulo exact without reasoning about float ranges.
 */
export function isValidOgrn(value: unknown): boolean {
  if (!isDigits(value, 13)) return false;
  return (BigInt(value.slice(0, 12)) % 11n) % 10n === BigInt(value.charAt(12));
}

/** OGRNIP of a sole proprietor: 15 digits, the last one is (first 14 mod 13) mod 10. */
export function isValidOgrnip(value: unknown): boolean {
  if (!isDigits(value, 15)) return false;
  return (BigInt(value.slice(0, 14)) % 13n) % 10n === BigInt(value.charAt(14));
}

const BIK = /^[012]\d{8}$/;

/** Internal guard; the public predicate returns plain boolean so `false` never narrows a string to never. */
function isBik(value: unknown): value is string {
  return typeof value === 'string' && BIK.test(value);
}

/** BIK: 9 digits starting with 0, 1 or 2. It has no check digit of its own. */
export function isValidBik(value: unknown): boolean {
  return isBik(value);
}

/**
 * Treasury (TOFK) BIKs: `00…` (the pre-2021 numbering, e.g. 004525988) and `01…` (the
 * numbering of the treasury payment system since 2021, e.g. 017003983, "ОПЕРАЦИОННЫЙ
 * ДЕПАРТАМЕНТ БАНКА РОССИИ//МЕЖРЕГИОНАЛЬНОЕ ОПЕРАЦИОННОЕ УФК г. Москва"). At such a BIK:
 * - the account in the corr. account's place is the single treasury account (ЕКС, `40102…`,
 *   e.g. 40102810445370000059): it is keyed with the corr. prefix (`0` + BIK digits 5–6) and
 *   does not repeat the BIK's last 3 digits;
 * - the payee's account is a treasury account (казначейский счёт, `03…`, e.g.
 *   03100643000000018500, the tax service's): its 9th digit is part of the account number, not
 *   an order-515 control key (the published accounts fail the key with every prefix), so only
 *   its shape is checked;
 * - any other account at a treasury BIK (the old `40101…` accounts) is keyed with the corr. prefix.
 */
function isTreasuryBik(bik: string): boolean {
  return bik.startsWith('00') || bik.startsWith('01');
}

/** A treasury account (казначейский счёт): 20 digits starting with `03`. */
function isTreasuryAccount(account: string): boolean {
  return account.startsWith('03');
}

const ACCOUNT_KEY_WEIGHTS = [7, 1, 3] as const;

/**
 * Bank of Russia control key (order 515): prefix (3 digits) + account (20 digits), weights
 * 7,1,3 repeated, sum of the last digit of each product; the key is right when the sum ends in 0.
 */
function hasValidAccountKey(prefix: string, account: string): boolean {
  const s = prefix + account;
  let sum = 0;
  for (let i = 0; i < s.length; i++) {
    const weight = ACCOUNT_KEY_WEIGHTS[i % 3] ?? 0;
    sum += (Number(s.charAt(i)) * weight) % 10;
  }
  return sum % 10 === 0;
}

/** Prefix for a corr. account (or any account at a treasury BIK): `0` + BIK digits 5–6. */
function corrPrefix(bik: string): string {
  return '0' + bik.slice(4, 6);
}

/**
 * A settlement (client) account opened at the bank with this BIK: its key is computed with
 * BIK digits 7–9 as the prefix. At a treasury BIK (`00…`, `01…`) a treasury account (`03…`)
 * has no control key and passes on its shape; other accounts there use the corr. prefix.
 * `false` when either value is malformed.
 */
export function isValidAccountForBik(account: unknown, bik: unknown): boolean {
  if (!isDigits(account, 20) || !isBik(bik)) return false;
  if (isTreasuryBik(bik) && isTreasuryAccount(account)) return true;
  const prefix = isTreasuryBik(bik) ? corrPrefix(bik) : bik.slice(6, 9);
  return hasValidAccountKey(prefix, account);
}

/**
 * The bank's correspondent account at the Bank of Russia: key computed with `0` + BIK digits
 * 5–6, and its last 3 digits equal BIK digits 7–9. For a treasury BIK (`00…`, `01…`) only the
 * key is checked: the single treasury account (e.g. 40102810445370000059 for BIK 017003983,
 * 40102810545370000003 for 004525988) does not repeat the BIK's tail.
 */
export function isValidCorrAccountForBik(corr: unknown, bik: unknown): boolean {
  if (!isDigits(corr, 20) || !isBik(bik)) return false;
  if (!hasValidAccountKey(corrPrefix(bik), corr)) return false;
  return isTreasuryBik(bik) || corr.slice(17) === bik.slice(6, 9);
}

/**
 * EDO participant id: a 3-character alphanumeric operator code (Diadoc is `2BM`) followed by
 * 1–43 characters of `[A-Za-z0-9@.-]`, 4–46 in all. Case-insensitive, so both cases pass.
 */
const EDO_PARTICIPANT_ID = /^[A-Za-z0-9]{3}[A-Za-z0-9@.-]{1,43}$/;

/** See {@link EDO_PARTICIPANT_ID}; a format check only, the operator is the authority. */
export function isValidEdoParticipantId(value: unknown): boolean {
  return typeof value === 'string' && EDO_PARTICIPANT_ID.test(value);
}
