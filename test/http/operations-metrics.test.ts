/**
 * The gauges collected on scrape for the alerting rules (src/http/operations-metrics.ts): the
 * delivery backlog's age counts only what a worker would claim now, the database probe, the disk.
 */
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertOutboxRows } from '../../src/db/outbox.js';
import type { OutboxTable } from '../../src/db/types.js';
import { registerOperationsMetrics } from '../../src/http/operations-metrics.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../helpers/db.js';
import { ACME_KEY } from '../helpers/fixtures.js';

let app: TestApp;
let db: TestDatabase;
const documents: string[] = [];
beforeAll(async () => {
  app = await buildTestApp();
  db = app.db;
  for (let i = 0; i < 2; i++) {
    const res = await app.call({
      method: 'POST',
      url: '/api/v1/invoices',
      headers: { 'x-api-key': ACME_KEY },
      payload: { invoice: { number: `OM-${i}`, date: '2026-03-02', currency: 'RUB', seller: { inn: '7707083893' }, buyer: { name: 'Покупатель' }, items: [{ name: 'Работа', qty: 1, price: 100, vat_pct: 22 }] } },
    });
    documents.push((res.json() as { public_id: string }).public_id);
  }
});
afterAll(async () => {
  await app.close();
});

function row(id: string, kind: OutboxTable['kind'], state: OutboxTable['state'], nextAttemptAt: Date, lockedUntil: Date | null = null): OutboxTable {
  const at = new Date(Date.now() - 3_600_000).toISOString();
  return {
    team_id: 'acme', id, kind, public_id: documents[id.startsWith('e') ? 0 : 1] as string, revision: 1, position: Number(id.slice(1)), recipient: 'b@buyer.example',
    idem_key: `ops-${id}`, message_id: `<${id}@x>`, payload: '{}', state, attempts: 0, max_attempts: 5,
    next_attempt_at: nextAttemptAt.toISOString(), locked_by: lockedUntil ? 'someone' : null,
    locked_until: lockedUntil?.toISOString() ?? null, last_error: null, last_error_code: null, sent_at: null,
    created_at: at, updated_at: at, traceparent: null,
  };
}

async function values(registry: Registry, name: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const out: Record<string, number> = {};
  for (const v of (metric?.values ?? []) as Array<{ labels: Record<string, string>; value: number }>) {
    out[Object.values(v.labels).join(',') || '-'] = v.value;
  }
  return out;
}

describe('operations gauges', () => {
  it('age the oldest due item per channel, ignoring what waits for its retry time or is leased', async () => {
    const registry = new Registry();
    registerOperationsMetrics(registry, { database: db, embeddedDatabaseFile: db.target.kind === 'sqlite' ? db.target.file : null, redis: null });
    expect(await values(registry, 'invoicing_delivery_backlog_age_seconds')).toEqual({ email: 0, edo: 0, webhook: 0 });

    const now = Date.now();
    await insertOutboxRows(db.db, [
      row('e1', 'email', 'pending', new Date(now - 120_000)),
      row('e2', 'email', 'pending', new Date(now + 600_000)),
      row('e3', 'email', 'sent', new Date(now - 7_200_000)),
      row('d1', 'edo_send', 'sending', new Date(now - 900_000), new Date(now - 30_000)),
      row('d2', 'edo_send', 'sending', new Date(now - 900_000), new Date(now + 30_000)),
    ]);
    const ages = await values(registry, 'invoicing_delivery_backlog_age_seconds');
    expect(ages.email).toBeGreaterThanOrEqual(120);
    expect(ages.email).toBeLessThan(150);
    expect(ages.edo).toBeGreaterThanOrEqual(30);
    expect(ages.edo).toBeLessThan(60);
    expect(ages.webhook).toBe(0);

    expect(await values(registry, 'invoicing_dependency_up')).toEqual({ database: 1 });
  });

  it('report the database down when it does not answer, and Redis as its connection says', async () => {
    const closed = await createTestDb();
    await closed.close();
    let redisUp = false;
    const registry = new Registry();
    registerOperationsMetrics(registry, { database: closed, embeddedDatabaseFile: null, redis: { reachable: () => redisUp } });
    expect(await values(registry, 'invoicing_dependency_up')).toEqual({ database: 0, redis: 0 });
    redisUp = true;
    expect((await values(registry, 'invoicing_dependency_up')).redis).toBe(1);
    await closed.drop().catch(() => undefined);
  });

  it.runIf(!usingPostgres())('on SQLite, the disk and the database size', async () => {
    if (db.target.kind !== 'sqlite') return;
    const registry = new Registry();
    registerOperationsMetrics(registry, { database: db, embeddedDatabaseFile: db.target.file, redis: null });
    const avail = (await values(registry, 'invoicing_sqlite_filesystem_avail_bytes'))['-'] as number;
    const size = (await values(registry, 'invoicing_sqlite_filesystem_size_bytes'))['-'] as number;
    expect(avail).toBeGreaterThan(0);
    expect(size).toBeGreaterThan(avail);
    expect((await values(registry, 'invoicing_sqlite_database_bytes'))['-']).toBeGreaterThan(4096);
  });
});
