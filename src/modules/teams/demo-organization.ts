/**
 * The «Ромашка» demo organization, the one place it is written: the sample catalog and the
 * seller of the sample document in demo mode (the demo token), and the demo team seeded on
 * the first start of an empty database (`seedDemoTeamIfEmpty`). Nothing of any real team.
 */
import type { CatalogData } from './organizations.js';

const at = '2026-01-01T00:00:00.000Z';

export const DEMO_CATALOG_DATA: CatalogData = {
  organizations: [
    {
      team_id: 'demo',
      id: 'demo-org',
      sort_order: 0,
      name: 'ООО «Ромашка»',
      inn: '7707083893',
      kpp: '773601001',
      email: 'billing@romashka.example',
      address: 'г. Москва, ул. Примерная, д. 1',
      edo_id: '2BM-7707083893-2012052808301120',
      active: 1,
      updated_at: at,
    },
  ],
  bankAccounts: [
    {
      team_id: 'demo',
      id: 'demo-bank',
      organization_id: 'demo-org',
      sort_order: 0,
      bank_name: 'ПАО Сбербанк',
      bik: '044525225',
      account: '40702810938000000001',
      corr_account: '30101810400000000225',
      is_default: 1,
      updated_at: at,
    },
  ],
  managers: [
    { team_id: 'demo', id: 'demo-manager', sort_order: 0, name: 'Иван Петров', email: 'ivan@romashka.example', phone: '+7 900 000-00-00', updated_at: at },
  ],
  signers: [
    {
      team_id: 'demo',
      id: 'demo-signer',
      organization_id: 'demo-org',
      sort_order: 0,
      name: 'Анна Смирнова',
      position: 'Генеральный директор',
      role: 'director',
      updated_at: at,
    },
  ],
};
