import { describe, expect, it } from 'vitest';
import {
  isValidAccountForBik,
  isValidBik,
  isValidCorrAccountForBik,
  isValidEdoParticipantId,
  isValidInn,
  isValidKpp,
  isValidOgrn,
  isValidOgrnip,
} from '../../../src/modules/invoices/rules/checksums.js';

/** Every string that differs from `s` in exactly one digit. */
function oneDigitChanges(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i++) {
    for (let d = 0; d <= 9; d++) {
      const digit = String(d);
      if (s.charAt(i) !== digit) out.push(s.slice(0, i) + digit + s.slice(i + 1));
    }
  }
  return out;
}

describe('isValidInn', () => {
  it.each(['7707083893', '7736207543', '7830002293', '7701234560'])('accepts the 10-digit INN %s', (inn) => {
    expect(isValidInn(inn)).toBe(true);
  });

  it('accepts the 12-digit INN 500100732259', () => {
    expect(isValidInn('500100732259')).toBe(true);
  });

  it.each(['7707083894', '500100732258', '500100732249'])('rejects the wrong check digit in %s', (inn) => {
    expect(isValidInn(inn)).toBe(false);
  });

  it('rejects every single-digit change of a valid 10-digit INN', () => {
    for (const changed of oneDigitChanges('7707083893')) expect(isValidInn(changed)).toBe(false);
  });

  it.each(['', '770708389', '77070838931', '77070838930', '770708389a', ' 7707083893', '7707083893\n', '５７０７０８３８９３'])(
    'rejects the malformed value %j',
    (inn) => {
      expect(isValidInn(inn)).toBe(false);
    },
  );

  it('rejects non-strings', () => {
    expect(isValidInn(7707083893)).toBe(false);
    expect(isValidInn(null)).toBe(false);
    expect(isValidInn(undefined)).toBe(false);
  });
});

describe('isValidKpp', () => {
  it.each(['770101001', '773601001', '7701AB001', '7701ZZ999'])('accepts %s', (kpp) => {
    expect(isValidKpp(kpp)).toBe(true);
  });

  it.each(['', '77010100', '7701010010', '7701ab001', 'A70101001', '77010100A', '7701 1001', 'АБВГ01001'])('rejects %j', (kpp) => {
    expect(isValidKpp(kpp)).toBe(false);
  });
});

describe('isValidOgrn / isValidOgrnip', () => {
  it('accepts OGRN 1027700132195 and rejects 1027700132196', () => {
    expect(isValidOgrn('1027700132195')).toBe(true);
    expect(isValidOgrn('1027700132196')).toBe(false);
  });

  it('accepts OGRNIP 304500116000157 and rejects a changed check digit', () => {
    expect(isValidOgrnip('304500116000157')).toBe(true);
    expect(isValidOgrnip('304500116000158')).toBe(false);
  });

  it('does not confuse the two lengths', () => {
    expect(isValidOgrn('304500116000157')).toBe(false);
    expect(isValidOgrnip('1027700132195')).toBe(false);
  });

  it.each(['', '102770013219', '10277001321950', '102770013219a'])('rejects the malformed OGRN %j', (v) => {
    expect(isValidOgrn(v)).toBe(false);
  });
});

describe('isValidBik', () => {
  it.each(['044525225', '044525700', '049805746', '004525988', '100000000', '200000000'])('accepts %s', (bik) => {
    expect(isValidBik(bik)).toBe(true);
  });

  it.each(['', '04452522', '0445252250', '344525225', '04452522a', ' 044525225'])('rejects %j', (bik) => {
    expect(isValidBik(bik)).toBe(false);
  });
});

describe('isValidAccountForBik (client account, BIK digits 7–9)', () => {
  it.each([
    ['044525225', '40702810138250123017'],
    ['044525225', '40702810938000000001'],
    ['044525700', '40702810800001400002'],
    ['049805746', '40602810700000000025'],
  ])('accepts BIK %s with account %s', (bik, account) => {
    expect(isValidAccountForBik(account, bik)).toBe(true);
  });

  it('rejects 40702810238250123017 at 044525225 (reference vector)', () => {
    expect(isValidAccountForBik('40702810238250123017', '044525225')).toBe(false);
  });

  it('rejects every single-digit change of 40702810938000000001 at 044525225', () => {
    for (const changed of oneDigitChanges('40702810938000000001')) {
      expect(isValidAccountForBik(changed, '044525225')).toBe(false);
    }
  });

  it('rejects the account when a BIK digit 7–9 changes', () => {
    for (const bik of ['044525125', '044525215', '044525224']) {
      expect(isValidAccountForBik('40702810938000000001', bik)).toBe(false);
    }
  });

  it('does not accept a corr. account as a client account of the same bank', () => {
    expect(isValidAccountForBik('30101810400000000225', '044525225')).toBe(false);
  });

  it('keys accounts at a treasury BIK (00…) with the corr. prefix only', () => {
    // УФК по г. Москве: single treasury account 40102810545370000003, BIK 004525988.
    expect(isValidAccountForBik('40102810545370000003', '004525988')).toBe(true);
    expect(isValidAccountForBik('40102810645370000003', '004525988')).toBe(false);
  });

  it('accepts treasury accounts (03…) at treasury BIKs on their shape: they carry no order-515 key', () => {
    // The tax service's treasury account at the Moscow treasury, published with BIK 017003983.
    expect(isValidAccountForBik('03100643000000018500', '017003983')).toBe(true);
    expect(isValidAccountForBik('03100643000000017300', '004525988')).toBe(true);
    // A treasury account at an ordinary bank is still keyed as a client account: it fails there.
    expect(isValidAccountForBik('03100643000000018500', '044525225')).toBe(false);
    // Not 20 digits: refused whatever the BIK.
    expect(isValidAccountForBik('0310064300000001850', '017003983')).toBe(false);
  });

  it('keys other accounts at a 01… treasury BIK with the corr. prefix, like 00…', () => {
    expect(isValidAccountForBik('40102810445370000059', '017003983')).toBe(true);
    expect(isValidAccountForBik('40102810445370000058', '017003983')).toBe(false);
  });

  it.each([
    ['4070281093800000000', '044525225'],
    ['407028109380000000011', '044525225'],
    ['4070281093800000000a', '044525225'],
    ['40702810938000000001', '04452522'],
    ['40702810938000000001', '344525225'],
    ['', ''],
  ])('rejects malformed account %j / BIK %j', (account, bik) => {
    expect(isValidAccountForBik(account, bik)).toBe(false);
  });
});

describe('isValidCorrAccountForBik (0 + BIK digits 5–6, tail = BIK digits 7–9)', () => {
  it.each([
    ['044525225', '30101810400000000225'],
    ['044525700', '30101810200000000700'],
  ])('accepts BIK %s with corr. account %s', (bik, corr) => {
    expect(isValidCorrAccountForBik(corr, bik)).toBe(true);
  });

  it('rejects every single-digit change of 30101810400000000225 at 044525225', () => {
    for (const changed of oneDigitChanges('30101810400000000225')) {
      expect(isValidCorrAccountForBik(changed, '044525225')).toBe(false);
    }
  });

  it('rejects the pair when one of BIK digits 5–9 changes; digits 1–4 are not part of any key', () => {
    // Digits 1–4 (country and region) take no part in either rule, so a change there is
    // undetectable by checksum: only the bank directory could catch it.
    for (const bik of oneDigitChanges('044525225')) {
      const changedAt = [...bik].findIndex((c, i) => c !== '044525225'.charAt(i));
      const corr = isValidCorrAccountForBik('30101810400000000225', bik);
      const account = isValidAccountForBik('40702810938000000001', bik);
      if (changedAt >= 4) expect({ bik, corr }).toEqual({ bik, corr: false });
      if (changedAt >= 6) expect({ bik, account }).toEqual({ bik, account: false });
      if (changedAt === 0 && !isValidBik(bik)) expect({ bik, corr, account }).toEqual({ bik, corr: false, account: false });
    }
  });

  it('requires the tail to equal BIK digits 7–9 even when the key matches', () => {
    // 044525225 and 044525…: same prefix "052"; only the tail check tells these banks apart.
    expect(isValidCorrAccountForBik('30101810400000000225', '044525700')).toBe(false);
  });

  it('does not accept a client account as a corr. account', () => {
    expect(isValidCorrAccountForBik('40702810938000000001', '044525225')).toBe(false);
  });

  it('checks only the key for a treasury BIK (the single treasury account does not repeat the BIK tail)', () => {
    expect(isValidCorrAccountForBik('40102810545370000003', '004525988')).toBe(true);
    expect(isValidCorrAccountForBik('40102810545370000004', '004525988')).toBe(false);
  });

  it('accepts the single treasury account (ЕКС) at a treasury BIK of the 01… numbering', () => {
    // ОПЕРАЦИОННЫЙ ДЕПАРТАМЕНТ БАНКА РОССИИ//МЕЖРЕГИОНАЛЬНОЕ ОПЕРАЦИОННОЕ УФК г. Москва:
    // BIK 017003983, ЕКС 40102810445370000059 (the single tax account).
    expect(isValidCorrAccountForBik('40102810445370000059', '017003983')).toBe(true);
    expect(isValidCorrAccountForBik('40102810445370000058', '017003983')).toBe(false);
    expect(isValidCorrAccountForBik('40102810545370000059', '017003983')).toBe(false);
  });

  it('rejects malformed values', () => {
    expect(isValidCorrAccountForBik('3010181040000000022', '044525225')).toBe(false);
    expect(isValidCorrAccountForBik('30101810400000000225', '44525225')).toBe(false);
    expect(isValidCorrAccountForBik(undefined, '044525225')).toBe(false);
  });
});

describe('isValidEdoParticipantId', () => {
  it.each(['2BM-7707083893-770701001-201305170556540557820', '2bm-7707083893', '2AE1234', '2BMx', 'ABC@example.ru', `2BM${'a'.repeat(43)}`])(
    'accepts %s',
    (id) => {
      expect(isValidEdoParticipantId(id)).toBe(true);
    },
  );

  it.each(['', '2BM', `2BM${'a'.repeat(44)}`, '2BM 7707083893', '2BM_7707083893', '2BM-Ю', '-BM1234', '2B.1234', 'x'])('rejects %j', (id) => {
    expect(isValidEdoParticipantId(id)).toBe(false);
  });
});
