/**
 * Durability of acknowledged creates: a real `invoicing serve` under concurrent
 * create load (group commit batches them on SQLite) is killed with SIGKILL mid-load; after a
 * restart on the same database every document whose create was answered 2xx is readable,
 * with its items, exactly as acknowledged. Requests cut off by the kill may or may not have
 * been stored (their client never heard), but none is stored twice or half.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDb, type TestDatabase } from '../../helpers/db.js';
import { ACME_KEY, bootstrapFixture } from '../../helpers/fixtures.js';
import { startService, type ServiceProcess } from '../../helpers/process.js';
import { simpleDoc } from './write-helpers.js';

// Real processes on a loaded 2-core machine: generous limits.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 90_000 });

let db: TestDatabase;
let tmp: string;
let bootstrapFile: string;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  db = await createTestDb();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-kill-load-'));
  bootstrapFile = path.join(tmp, 'bootstrap.json');
  fs.writeFileSync(bootstrapFile, JSON.stringify(bootstrapFixture()));
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  await db?.drop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

async function serve(): Promise<ServiceProcess> {
  const service = await startService({
    DATABASE_URL: db.url,
    INVOICING_BOOTSTRAP_FILE: bootstrapFile,
    INVOICING_DATA_DIR: path.join(tmp, 'data'),
    INVOICING_IP_RATE_PER_SEC: '1000000',
  });
  processes.push(service);
  await service.waitUntilHealthy();
  return service;
}

interface Acknowledged {
  publicId: string;
  number: string;
  total: string;
  etag: string | null;
}

describe('kill -9 under create load', () => {
  it('loses no acknowledged document', async () => {
    const first = await serve();
    const acknowledged: Acknowledged[] = [];
    const cutOff: string[] = [];
    let killed = false;
    let sent = 0;

    // 40 clients, each posting documents back to back until the service dies.
    const client = async (c: number) => {
      for (let i = 0; !killed; i++) {
        const number = `K-${c}-${i}`;
        sent += 1;
        try {
          const res = await fetch(`${first.baseUrl}/api/v1/invoices`, {
            method: 'POST',
            headers: { 'x-api-key': ACME_KEY, 'content-type': 'application/json' },
            body: JSON.stringify({ invoice: simpleDoc(number, { items: [{ name: 'Работа', qty: 1 + (i % 5), price: 100 + c, vat_pct: 22 }, { name: 'Доставка', qty: 1, price: 50, vat_pct: 22 }] }) }),
          });
          const text = await res.text();
          if (res.status === 200) {
            const body = JSON.parse(text) as { public_id: string; totals: { total: string } };
            acknowledged.push({ publicId: body.public_id, number, total: body.totals.total, etag: res.headers.get('etag') });
          } else {
            throw new Error(`create answered ${res.status}: ${text}`);
          }
        } catch (err) {
          if (!killed) throw err;
          cutOff.push(number);
          return;
        }
      }
    };
    const clients = Array.from({ length: 40 }, (_, c) => client(c));

    // Kill once the load is well under way (enough acknowledged that batches run).
    const deadline = Date.now() + 60_000;
    while (acknowledged.length < 150 && Date.now() < deadline) await sleep(20);
    expect(acknowledged.length).toBeGreaterThanOrEqual(150);
    killed = true;
    // Every process of the service at once (with several API processes, the primary alone would
    // leave them a moment to answer what is in flight).
    expect(await first.killAll()).toEqual({ code: null, signal: 'SIGKILL' });
    await Promise.allSettled(clients);
    // The kill cut requests off mid-flight: proof that it happened under load.
    expect(cutOff.length).toBeGreaterThan(0);

    const second = await serve();
    for (const doc of acknowledged) {
      const res = await fetch(`${second.baseUrl}/api/v1/invoices/${encodeURIComponent(doc.publicId)}`, { headers: { 'x-api-key': ACME_KEY } });
      expect(res.status, `acknowledged ${doc.number} (${doc.publicId})`).toBe(200);
      const body = (await res.json()) as { invoice: { number: string; items: unknown[] }; totals: { total: string } };
      expect(body.invoice.number).toBe(doc.number);
      expect(body.invoice.items).toHaveLength(2);
      expect(body.totals.total).toBe(doc.total);
      expect(res.headers.get('etag')).toBe(doc.etag);
    }
    // Nothing stored twice, nothing half: every stored document has its two items and its links.
    const rows = await db.db.selectFrom('invoices').select(['public_id', 'number']).where('team_id', '=', 'acme').where('number', 'like', 'K-%').execute();
    expect(new Set(rows.map((r) => r.number)).size).toBe(rows.length);
    expect(rows.length).toBeGreaterThanOrEqual(acknowledged.length);
    expect(rows.length).toBeLessThanOrEqual(acknowledged.length + cutOff.length);
    const items = await db.db
      .selectFrom('invoice_items')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', 'acme')
      .where('public_id', 'in', rows.map((r) => r.public_id))
      .executeTakeFirstOrThrow();
    expect(Number(items.n)).toBe(2 * rows.length);
    process.stdout.write(`kill -9 under load: ${sent} sent, ${acknowledged.length} acknowledged, ${cutOff.length} cut off, ${rows.length} stored\n`);
  });
});
