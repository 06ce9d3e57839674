import { describe, expect, it } from 'vitest';
import { isBase64Image, isWholeUrl } from '../../../src/modules/invoices/rules/prohibited.js';
import { validateInvoice } from '../../../src/modules/invoices/rules/validation.js';
import { PNG_1PX, failed, ok, withChange } from './validation-fixtures.js';

describe('validateInvoice: prohibited fields', () => {
  it('names every offending path together, and nothing else', () => {
    const result = failed(validateInvoice(withChange((d) => {
      d.seller.logo_url = 'x';
      d.items[0].image_link = null;
      d.stamp = `data:image/png;base64,${PNG_1PX}`;
      d.items[1].picture = PNG_1PX;
      d.signers = [{ name: 'Анна', facsimile_url: 'https://cdn.example.com/f.png' }];
      d.number = ''; // a validation error, not reported while prohibited fields remain
    })));
    expect(result.error).toBe('prohibited_field');
    const paths = ['seller.logo_url', 'items[0].image_link', 'items[1].picture', 'stamp', 'signers[0].facsimile_url'];
    expect(result.errors.map((e) => e.field).sort()).toEqual([...paths].sort());
    expect(result.errors.every((e) => e.code === 'prohibited_field')).toBe(true);
    for (const p of paths) expect(result.details).toContain(p);
    expect(result.missing_fields).toEqual([]);
  });

  it.each([
    ['seller_logo_url', (d: Record<string, any>) => (d.seller_logo_url = null)],
    ['seller_stamp_url', (d: Record<string, any>) => (d.seller_stamp_url = '')],
    ['payment_qr_url', (d: Record<string, any>) => (d.payment_qr_url = 'qr.png')],
    ['manager.contact_qr_url', (d: Record<string, any>) => (d.manager = { contact_qr_url: 'x' })],
    ['buyer_contact.contact_qr_url', (d: Record<string, any>) => (d.buyer_contact = { contact_qr_url: 'x' })],
    ['meta.Photo_URI', (d: Record<string, any>) => (d.meta = { Photo_URI: 1 })],
    ['items[1].website', (d: Record<string, any>) => (d.items[1].website = '  HTTPS://example.com/page?a=1 ')],
    ['buyer.site', (d: Record<string, any>) => (d.buyer.site = 'http://example.com')],
    ['note', (d: Record<string, any>) => (d.note = 'data:,hello')],
    ['x["odd.key"]', (d: Record<string, any>) => (d.x = { 'odd.key': 'DATA:text/plain;charset=utf-8,hi' })],
  ])('refuses %s', (path, change) => {
    const result = failed(validateInvoice(withChange(change)));
    expect(result.error).toBe('prohibited_field');
    expect(result.errors.map((e) => e.field)).toEqual([path]);
  });

  it('reports a prohibited property once, not what is inside it', () => {
    const result = failed(validateInvoice(withChange((d) => (d.links_url = { a: 'https://x.example', b_url: 'y' }))));
    expect(result.errors.map((e) => e.field)).toEqual(['links_url']);
  });

  it('allows prose that mentions URLs and text that only looks like base64', () => {
    ok(validateInvoice(withChange((d) => {
      d.comment = 'Оплата на сайте https://pay.example.com до пятницы';
      d.purpose = 'Data: see the contract, section 2';
      d.urls = 'a field named urls';
      d.link = 'plain';
      d.ref = 'QkFTRTY0IGlzIG5vdCBhbiBpbWFnZSBhdCBhbGw='; // "BASE64 is not an image at all"
      d.guid = 'AAABAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'; // ICO magic but no image entry
      d.hex = '4e9b1c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c';
      d.seller.account = '40702810938000000001';
    })));
  });
});

describe('isBase64Image / isWholeUrl', () => {
  const b64 = (bytes: number[], pad = 40) => Buffer.from([...bytes, ...Array.from({ length: pad }, (_, i) => i + 1)]).toString('base64');

  it.each([
    ['PNG', PNG_1PX],
    ['JPEG', b64([0xff, 0xd8, 0xff, 0xe0])],
    ['GIF', Buffer.from('GIF89a' + '\x01'.repeat(40), 'latin1').toString('base64')],
    ['WEBP', Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ' + 'x'.repeat(30), 'latin1').toString('base64')],
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>').toString('base64')],
    ['SVG with prolog', Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')],
    ['BMP', b64([0x42, 0x4d, 0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0])],
    ['ICO', b64([0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0])],
    ['line-wrapped PNG', `${PNG_1PX.slice(0, 20)}\r\n${PNG_1PX.slice(20)}`],
    ['PNG after a media type', `image/png;base64,${PNG_1PX}`],
  ])('recognises %s', (_label, value) => {
    expect(isBase64Image(value)).toBe(true);
  });

  it.each([
    ['too short', 'iVBORw0KGgo='],
    ['BM text', Buffer.from('BM is a pair of letters, not a bitmap file').toString('base64')],
    ['XML without svg', Buffer.from('<?xml version="1.0"?><Файл ИдФайл="ON_NSCHFDOPPR"/>').toString('base64')],
    ['prose', 'Qk this is a sentence that is long enough to count'],
    ['digits', '4070281093800000000140702810938000000001'],
  ])('does not mistake %s for an image', (_label, value) => {
    expect(isBase64Image(value)).toBe(false);
  });

  it('tells whole URLs from prose', () => {
    expect(isWholeUrl(' https://a.example/x ')).toBe(true);
    expect(isWholeUrl('data:image/png;base64,AAAA')).toBe(true);
    expect(isWholeUrl('http://')).toBe(false);
    expect(isWholeUrl('see https://a.example')).toBe(false);
    expect(isWholeUrl('data: none')).toBe(false);
  });
});

describe('prohibited scan on large values', () => {
  it('stays linear on megabyte strings that almost match', () => {
    const started = performance.now();
    expect(isWholeUrl(`http://${'a'.repeat(1_000_000)} b`)).toBe(false);
    expect(isBase64Image(`${'A'.repeat(1_000_000)}!`)).toBe(false);
    // Not media, but far beyond any field's bound (bounds.ts): refused as too long, not as prohibited.
    const result = validateInvoice(withChange((d) => (d.blob = `data ${'x'.repeat(1_000_000)}`)));
    expect(result).toMatchObject({ ok: false, error: 'validation_failed', errors: [{ field: 'blob', code: 'too_long' }] });
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
