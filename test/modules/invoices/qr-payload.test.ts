import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { buildPaymentQrPayload, qrPayloadBytes, qrPayloadEncoding, QrPayloadError, type PaymentQrInput } from '../../../src/modules/invoices/rules/qr-payload.js';

const REFERENCE_EXAMPLE =
  'ST00012|Name=ООО «Три кита»|PersonalAcc=40702810138250123017|BankName=ПАО СБЕРБАНК|BIC=044525225|' +
  'CorrespAcc=30101810400000000225|PayeeINN=7701234560|KPP=770101001|Sum=1978999|' +
  'Purpose=Оплата по счёту № 15 от 02.03.2026, в т.ч. НДС 3290.00 руб.';

const base: PaymentQrInput = {
  name: 'ООО «Три кита»',
  personalAcc: '40702810138250123017',
  bankName: 'ПАО СБЕРБАНК',
  bic: '044525225',
  correspAcc: '30101810400000000225',
};

const full: PaymentQrInput = {
  ...base,
  payeeInn: '7701234560',
  kpp: '770101001',
  sumKopecks: '1978999',
  purpose: 'Оплата по счёту № 15 от 02.03.2026, в т.ч. НДС 3290.00 руб.',
};

function errorOf(fn: () => unknown): QrPayloadError {
  try {
    fn();
  } catch (err) {
    if (err instanceof QrPayloadError) return err;
    throw err;
  }
  throw new Error('expected a QrPayloadError');
}

describe('buildPaymentQrPayload: the reference example', () => {
  it('matches byte for byte', () => {
    const payload = buildPaymentQrPayload(full);
    expect(payload).toBe(REFERENCE_EXAMPLE);
    expect(Buffer.from(payload, 'utf8').equals(Buffer.from(REFERENCE_EXAMPLE, 'utf8'))).toBe(true);
  });

  it('accepts the sum as a number or bigint', () => {
    expect(buildPaymentQrPayload({ ...full, sumKopecks: 1978999 })).toBe(REFERENCE_EXAMPLE);
    expect(buildPaymentQrPayload({ ...full, sumKopecks: 1978999n })).toBe(REFERENCE_EXAMPLE);
  });

  it('emits only the required block when nothing optional is given', () => {
    expect(buildPaymentQrPayload(base)).toBe(
      'ST00012|Name=ООО «Три кита»|PersonalAcc=40702810138250123017|BankName=ПАО СБЕРБАНК|BIC=044525225|CorrespAcc=30101810400000000225',
    );
  });

  it('omits empty or null optional fields and keeps the optional order', () => {
    const payload = buildPaymentQrPayload({ ...base, payeeInn: '', kpp: null, sumKopecks: 500, purpose: '  ' });
    expect(payload.endsWith('|CorrespAcc=30101810400000000225|Sum=500')).toBe(true);
    const withoutKpp = buildPaymentQrPayload({ ...base, payeeInn: '500100732259', purpose: 'Оплата' });
    expect(withoutKpp.endsWith('|PayeeINN=500100732259|Purpose=Оплата')).toBe(true);
  });

  it('starts with the 8-character UTF-8 header', () => {
    expect(buildPaymentQrPayload(base).slice(0, 8)).toBe('ST00012|');
  });
});

describe('buildPaymentQrPayload: separator fallback', () => {
  it('switches to # when a value contains |, and puts # in the header', () => {
    const payload = buildPaymentQrPayload({ ...full, name: 'ООО «Три|кита»' });
    expect(payload).toBe(REFERENCE_EXAMPLE.replaceAll('|', '#').replace('Три кита', 'Три|кита'));
    expect(payload.startsWith('ST00012#Name=ООО «Три|кита»#PersonalAcc=')).toBe(true);
  });

  it('skips fallbacks that also occur in some value, in the GOST order', () => {
    const payload = buildPaymentQrPayload({ ...base, name: 'A|B', purpose: 'Счёт #15; срок: 5 дней' });
    // | # ; : are taken, so the next one, ^, is the separator.
    expect(payload).toBe(
      'ST00012^Name=A|B^PersonalAcc=40702810138250123017^BankName=ПАО СБЕРБАНК^BIC=044525225^' +
        'CorrespAcc=30101810400000000225^Purpose=Счёт #15; срок: 5 дней',
    );
  });

  it('takes optional values into account when choosing the separator', () => {
    expect(buildPaymentQrPayload({ ...base, purpose: 'a|b' }).slice(0, 8)).toBe('ST00012#');
  });

  it('refuses when every separator occurs in some value', () => {
    const all = '|#;:^_~{}!$%&()*+,/@';
    const err = errorOf(() => buildPaymentQrPayload({ ...base, purpose: all }));
    expect(err.code).toBe('no_free_separator');
    expect(err.message).toMatch(/separator/);
    // One character fewer frees the last separator, @.
    expect(buildPaymentQrPayload({ ...base, purpose: all.slice(0, -1) }).slice(0, 8)).toBe('ST00012@');
  });
});

describe('buildPaymentQrPayload: required fields', () => {
  it.each(['name', 'personalAcc', 'bankName', 'bic', 'correspAcc'] as const)('refuses an empty %s', (field) => {
    const err = errorOf(() => buildPaymentQrPayload({ ...base, [field]: '   ' }));
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('QrPayloadError');
    expect(err.code).toBe('missing_required');
  });

  it('refuses a missing value passed by an untyped caller', () => {
    const input = { ...base, bic: undefined } as unknown as PaymentQrInput;
    expect(errorOf(() => buildPaymentQrPayload(input)).message).toMatch(/BIC is required/);
  });

  it('refuses a required block over 300 bytes in both UTF-8 and windows-1251, naming the field to shorten', () => {
    // 100 CJK characters: 300 bytes in UTF-8, and no windows-1251 byte for them.
    const err = errorOf(() => buildPaymentQrPayload({ ...base, name: '漢'.repeat(100) }));
    expect(err.code).toBe('required_block_too_long');
    expect(err.key).toBe('Name');
    expect(err.message).toMatch(/300/);
    expect(err.message).toMatch(/shorten Name/);
    // The bank name is the longer one in bytes here (45 CJK characters = 135 bytes > 120).
    const bank = errorOf(() => buildPaymentQrPayload({ ...base, name: 'Ж'.repeat(60), bankName: '銀'.repeat(45) }));
    expect(bank.code).toBe('required_block_too_long');
    expect(bank.key).toBe('BankName');
  });

  it('accepts a required block of exactly 300 bytes and ignores optional fields in the count', () => {
    const rest = '|PersonalAcc=40702810138250123017|BankName=ПАО СБЕРБАНК|BIC=044525225|CorrespAcc=30101810400000000225';
    const room = 300 - Buffer.byteLength(`Name=${rest}`, 'utf8');
    // Two-byte letters keep the name under the 160-character cap while filling the bytes.
    const name = 'Ж'.repeat(Math.floor(room / 2)) + 'N'.repeat(room % 2);
    const payload = buildPaymentQrPayload({ ...base, name, purpose: 'Ж'.repeat(210) });
    expect(Buffer.byteLength(payload.slice(8, payload.indexOf('|Purpose=')), 'utf8')).toBe(300);
    expect(Buffer.byteLength(payload.slice(8), 'utf8')).toBeGreaterThan(300);
    expect(payload.startsWith(`ST00012|Name=${name}|PersonalAcc=`)).toBe(true);
    // One byte more: UTF-8 is over, so the QR falls back to windows-1251.
    expect(buildPaymentQrPayload({ ...base, name: name + 'N' }).startsWith(`ST00011|Name=${name}N|`)).toBe(true);
  });
});

describe('buildPaymentQrPayload: windows-1251 fallback', () => {
  const longName = 'ОБЩЕСТВО С ОГРАНИЧЕННОЙ ОТВЕТСТВЕННОСТЬЮ «ТОРГОВЫЙ ДОМ СЕВЕРНАЯ ЗВЕЗДА»';
  const longBank = 'ФИЛИАЛ «ЦЕНТРАЛЬНЫЙ» БАНКА ВТБ (ПАО)';

  it('keeps UTF-8 for the issue’s 295-byte block (201 bytes in windows-1251)', () => {
    const payload = buildPaymentQrPayload({ ...base, name: longName, bankName: longBank });
    expect(payload.startsWith('ST00012|')).toBe(true);
    expect(qrPayloadEncoding(payload)).toBe('utf-8');
    const block = payload.slice(8);
    expect(Buffer.byteLength(block, 'utf8')).toBe(295);
    expect(iconv.encode(block, 'win1251').length).toBe(201);
  });

  it('switches to ST00011 when a slightly longer name passes 300 UTF-8 bytes, counting 300 in windows-1251', () => {
    const name = `${longName} ФИЛИАЛ`;
    const payload = buildPaymentQrPayload({ ...full, name, bankName: longBank });
    expect(payload.startsWith(`ST00011|Name=${name}|PersonalAcc=40702810138250123017|BankName=${longBank}|`)).toBe(true);
    expect(qrPayloadEncoding(payload)).toBe('windows-1251');
    const bytes = qrPayloadBytes(payload);
    expect(bytes.equals(iconv.encode(payload, 'win1251'))).toBe(true);
    expect(bytes.length).toBe(Array.from(payload).length); // one byte a character
    expect(iconv.decode(bytes, 'win1251')).toBe(payload);
  });

  it('stays in UTF-8 when a character has no windows-1251 byte, and then refuses an over-long block', () => {
    const name = `${longName} ФИЛИАЛ ✓`;
    const err = errorOf(() => buildPaymentQrPayload({ ...base, name, bankName: longBank }));
    expect(err.code).toBe('required_block_too_long');
    expect(err.key).toBe('Name');
    // A character outside windows-1251 anywhere in the payload (here: the purpose) also keeps UTF-8.
    const withPurpose = errorOf(() => buildPaymentQrPayload({ ...base, name: `${longName} ФИЛИАЛ`, bankName: longBank, purpose: 'Оплата ✓' }));
    expect(withPurpose.code).toBe('required_block_too_long');
  });

  it('gives UTF-8 bytes for an ST00012 payload', () => {
    const payload = buildPaymentQrPayload(full);
    expect(qrPayloadBytes(payload).equals(Buffer.from(payload, 'utf8'))).toBe(true);
  });
});

describe('buildPaymentQrPayload: lengths and cleaning', () => {
  it('truncates Name to 160, BankName to 45 and Purpose to 210 characters', () => {
    const payload = buildPaymentQrPayload({ ...base, name: 'N'.repeat(170), bankName: 'B'.repeat(50), purpose: 'П'.repeat(250) });
    expect(payload).toContain(`|Name=${'N'.repeat(160)}|`);
    expect(payload).not.toContain('N'.repeat(161));
    expect(payload).toContain(`|BankName=${'B'.repeat(45)}|`);
    expect(payload.endsWith(`|Purpose=${'П'.repeat(210)}`)).toBe(true);
  });

  it('never splits a surrogate pair when truncating', () => {
    const payload = buildPaymentQrPayload({ ...base, purpose: 'x'.repeat(209) + '😀😀' });
    expect(payload.endsWith(`Purpose=${'x'.repeat(209)}😀`)).toBe(true);
  });

  it('trims values and turns control characters into spaces', () => {
    const payload = buildPaymentQrPayload({ ...base, name: '  ООО «Три кита»\n', purpose: 'Оплата\r\nпо счёту\t№ 15' });
    expect(payload.startsWith('ST00012|Name=ООО «Три кита»|')).toBe(true);
    expect(payload.endsWith('|Purpose=Оплата по счёту № 15')).toBe(true);
  });

  it.each([
    ['personalAcc', '407028101382501230171'],
    ['bic', '0445252250'],
    ['correspAcc', '301018104000000002251'],
    ['payeeInn', '7701234560123'],
    ['kpp', '7701010010'],
  ] as const)('refuses an over-long identifier %s instead of cutting it', (field, value) => {
    expect(errorOf(() => buildPaymentQrPayload({ ...base, [field]: value })).code).toBe('invalid_value');
  });

  it.each([['12.50'], ['-100'], ['1e3'], [12.5], [Number.NaN], ['1'.repeat(19)]])('refuses the sum %j', (sum) => {
    expect(errorOf(() => buildPaymentQrPayload({ ...base, sumKopecks: sum })).code).toBe('invalid_value');
  });

  it('normalises leading zeros in the sum and allows zero', () => {
    expect(buildPaymentQrPayload({ ...base, sumKopecks: '000500' }).endsWith('|Sum=500')).toBe(true);
    expect(buildPaymentQrPayload({ ...base, sumKopecks: 0 }).endsWith('|Sum=0')).toBe(true);
  });

  it('is deterministic', () => {
    expect(buildPaymentQrPayload(full)).toBe(buildPaymentQrPayload({ ...full }));
  });
});
