/**
 * Warnings on a party's requisites: INN and KPP format, OGRN / OGRNIP control digits, BIK format
 * and the control keys of the
 * settlement and correspondent accounts against the BIK (Bank of Russia order 515). They never
 * refuse a document: a typo in a requisite is the client's to fix, and the document is still
 * theirs to issue. The service calls this again on the seller once it has filled the omitted
 * requisites from the organization, so the warnings describe what is actually printed.
 */
import { isValidAccountForBik, isValidBik, isValidCorrAccountForBik, isValidInn, isValidKpp, isValidOgrn, isValidOgrnip } from './checksums.js';
import type { ValidationIssue } from '../model/invoice.model.js';

const ACCOUNT = /^\d{20}$/;

/** A non-blank string, trimmed; anything else counts as not given (a wrong type is an error elsewhere). */
function given(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  return s === '' ? undefined : s;
}

/**
 * Warnings for the requisites `party` carries, with paths under `prefix` (`seller`, `buyer`).
 * An account is checked against the BIK only when the BIK itself is well-formed; without a BIK
 * only its 20-digit shape can be checked.
 */
export function requisiteWarnings(party: Record<string, unknown>, prefix: string): ValidationIssue[] {
  const warnings: ValidationIssue[] = [];
  const warn = (key: string, code: string, message: string) => warnings.push({ field: `${prefix}.${key}`, code, message: `${prefix}.${key} ${message}` });

  const inn = given(party.inn);
  if (inn !== undefined && !isValidInn(inn)) {
    warn('inn', 'inn_checksum', 'is not a valid INN: 10 or 12 digits with correct check digits expected');
  }
  const kpp = given(party.kpp);
  if (kpp !== undefined && !isValidKpp(kpp)) {
    warn('kpp', 'kpp_format', 'is not a valid KPP: 9 characters, 4 digits, 2 digits or capital letters, 3 digits');
  }
  const ogrn = given(party.ogrn);
  if (ogrn !== undefined && !(ogrn.length === 15 ? isValidOgrnip(ogrn) : isValidOgrn(ogrn))) {
    warn('ogrn', 'ogrn_checksum', 'is not a valid OGRN (13 digits) or OGRNIP (15 digits): the control digit is wrong');
  }
  const ogrnip = given(party.ogrnip);
  if (ogrnip !== undefined && !isValidOgrnip(ogrnip)) {
    warn('ogrnip', 'ogrn_checksum', 'is not a valid OGRNIP: 15 digits with a correct control digit expected');
  }
  const bik = given(party.bik);
  const bikOk = bik !== undefined && isValidBik(bik);
  if (bik !== undefined && !bikOk) warn('bik', 'bik_format', 'is not a valid BIK: 9 digits starting with 0, 1 or 2');

  const account = given(party.account);
  if (account !== undefined) {
    if (!ACCOUNT.test(account)) warn('account', 'account_checksum', 'must be 20 digits');
    else if (bikOk && !isValidAccountForBik(account, bik)) {
      warn('account', 'account_checksum', `does not match BIK ${bik}: the control key is wrong`);
    }
  }
  const corr = given(party.corr_account);
  if (corr !== undefined) {
    if (!ACCOUNT.test(corr)) warn('corr_account', 'corr_account_checksum', 'must be 20 digits');
    else if (bikOk && !isValidCorrAccountForBik(corr, bik)) {
      warn('corr_account', 'corr_account_checksum', `does not match BIK ${bik}: wrong control key or last 3 digits`);
    }
  }
  return warnings;
}
