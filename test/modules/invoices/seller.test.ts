/**
 * Filling the seller from the team's organization and default bank account (seller.ts,
 * `resolveSellerFrom`): the requisites the payload omits are filled, the payload's own stay, and
 * the copy is a plain object with the payload's keys in their order, a `__proto__` key included
 * as a plain key (validation keeps it one).
 */
import { describe, expect, it } from 'vitest';
import type { BankAccountRow, OrganizationRow } from '../../../src/db/types.js';
import { resolveSellerFrom } from '../../../src/modules/invoices/rules/seller-resolution.js';

const organization: OrganizationRow = {
  team_id: 't',
  id: 'org',
  sort_order: 0,
  name: 'ООО «Ромашка»',
  inn: '7707083893',
  kpp: '773601001',
  email: 'office@romashka.example',
  address: 'г. Москва, ул. Ленина, д. 1',
  edo_id: null,
  active: 1,
  updated_at: '2026-11-28T00:00:00.000Z',
};
const account: BankAccountRow = {
  team_id: 't',
  id: 'ba',
  organization_id: 'org',
  sort_order: 0,
  bank_name: 'ПАО Сбербанк',
  bik: '044525225',
  account: '40702810938000000001',
  corr_account: '30101810400000000225',
  is_default: 1,
  updated_at: '2026-11-28T00:00:00.000Z',
};

describe('resolveSellerFrom', () => {
  it('fills what the payload omits, keeps what it gives, and leaves the payload as it was', () => {
    const seller = JSON.parse('{"inn":"7707083893","name":"Ромашка (счета)","kpp":""}') as { inn: string };
    const before = structuredClone(seller);
    const { seller: filled, organization: matched } = resolveSellerFrom(seller, [organization], [account], 10);
    expect(matched.id).toBe('org');
    expect(filled).toEqual({
      inn: '7707083893',
      name: 'Ромашка (счета)',
      kpp: '773601001',
      address: 'г. Москва, ул. Ленина, д. 1',
      email: 'office@romashka.example',
      bank_name: 'ПАО Сбербанк',
      bik: '044525225',
      account: '40702810938000000001',
      corr_account: '30101810400000000225',
    });
    // The payload's keys first, in their order, then the filled ones in fill order.
    expect(Object.keys(filled)).toEqual(['inn', 'name', 'kpp', 'address', 'email', 'bank_name', 'bik', 'account', 'corr_account']);
    expect(Object.getPrototypeOf(filled)).toBe(Object.prototype);
    expect(seller).toEqual(before);
  });

  it('keeps a "__proto__" key of the payload as a plain key, not as the copy’s prototype', () => {
    const seller = JSON.parse('{"inn":"7707083893","__proto__":{"polluted":true}}') as { inn: string };
    const { seller: filled } = resolveSellerFrom(seller, [organization], [account], 10);
    expect(Object.getPrototypeOf(filled)).toBe(Object.prototype);
    expect(Object.hasOwn(filled, '__proto__')).toBe(true);
    expect((filled as Record<string, unknown>).polluted).toBeUndefined();
    expect(filled.name).toBe('ООО «Ромашка»');
  });
});
