/** Bootstrap data for tests: the contract's example team plus a second team for isolation checks. */

export const ACME_KEY = 'ak_acme_erp_0001';
export const ACME_KEY_2 = 'ak_acme_crm_0002';
export const ACME_KEY_3 = 'ak_acme_over_0003';
export const ACME_INACTIVE_KEY = 'ak_acme_old_0004';
export const BETA_KEY = 'ak_beta_main_0001';
export const SERVICE_KEY = 'sk_legacy_0001';

export function bootstrapFixture(overrides: { basicKeyRate?: { per_sec: number; per_min: number; per_day: number }; basicTeamRate?: { per_sec: number; per_min: number; per_day: number } } = {}) {
  return {
    tariffs: {
      basic: {
        max_organizations: 1,
        max_api_keys: 2,
        key_rate: overrides.basicKeyRate ?? { per_sec: 1000, per_min: 100000, per_day: 10000000 },
        team_rate: overrides.basicTeamRate ?? { per_sec: 1000, per_min: 100000, per_day: 10000000 },
        emails_per_day: 50,
        external_share: true,
      },
    },
    teams: [
      {
        id: 'acme',
        name: 'ACME',
        tariff: 'basic',
        locale: 'ru',
        api_keys: [
          { id: 101, name: 'erp', secret: ACME_KEY, active: true },
          { id: 102, name: 'crm', secret: ACME_KEY_2, active: true },
          { id: 103, name: 'over-limit', secret: ACME_KEY_3, active: true },
          { id: 104, name: 'old', secret: ACME_INACTIVE_KEY, active: false },
        ],
        organizations: [
          {
            id: 'org-1',
            name: 'ООО «Ромашка»',
            inn: '7707083893',
            kpp: '773601001',
            email: 'billing@romashka.example',
            address: 'Москва',
            edo_id: '2BM-7707083893-2012052808301120',
            active: true,
          },
          { id: 'org-2', name: 'ООО «Второе»', inn: '7736207543', kpp: '773601001', active: true },
          { id: 'org-3', name: 'ООО «Закрытое»', inn: '7830002293', active: false },
        ],
        bank_accounts: [
          {
            id: 'ba-1',
            organization_id: 'org-1',
            bank_name: 'ПАО Сбербанк',
            bik: '044525225',
            account: '40702810938000000001',
            corr_account: '30101810400000000225',
            is_default: true,
          },
        ],
        managers: [{ id: 'm-1', name: 'Иван Петров', email: 'ivan@romashka.example', phone: '+7 900 000-00-00' }],
        signers: [{ id: 's-1', organization_id: 'org-1', name: 'Анна Смирнова', position: 'Генеральный директор', role: 'director' }],
      },
      {
        id: 'beta',
        name: 'Beta',
        api_keys: [{ id: 201, name: 'main', secret: BETA_KEY, active: true }],
        organizations: [{ id: 'b-org', name: 'ИП Бета', inn: '500100732259', active: true }],
        managers: [{ id: 'bm-1', name: 'Бета Менеджер' }],
      },
    ],
    service_keys: [{ id: 900, name: 'legacy-integration', secret: SERVICE_KEY, active: true }],
  };
}
