// The bootstrap file the in-process probes start their builds with: the bench team (one key,
// one organization with its default bank account, a manager and a signer) on a tariff whose
// limits never stop a probe. Shared by enqueue-, pg- and put-inprocess.mjs.
import fs from 'node:fs';

export const PROBE_KEY = 'ak_bench_0000000000000000000000000001';

export function writeProbeBootstrap(file) {
  const huge = { per_sec: 2e9, per_min: 2e9, per_day: 2e9 };
  fs.writeFileSync(file, JSON.stringify({
    tariffs: { bench: { max_organizations: 10, max_api_keys: 10, key_rate: huge, team_rate: huge, emails_per_day: 2_000_000_000, external_share: true } },
    teams: [{ id: 'bench', name: 'B', tariff: 'bench', api_keys: [{ id: 990001, name: 'bench', secret: PROBE_KEY, active: true }],
      organizations: [{ id: 'bench-org', name: 'ООО «Ромашка»', inn: '7707083893', kpp: '773601001', edo_id: '2BM-7707083893-2012052808301120', active: true }],
      bank_accounts: [{ id: 'bench-ba', organization_id: 'bench-org', bank_name: 'ПАО Сбербанк', bik: '044525225', account: '40702810938000000001', corr_account: '30101810400000000225', is_default: true }],
      managers: [{ id: 'bench-m', name: 'Иван Петров', email: 'ivan@romashka.example' }],
      signers: [{ id: 'bench-s', organization_id: 'bench-org', name: 'Анна Смирнова', position: 'Генеральный директор', role: 'director' }] }] }));
}
