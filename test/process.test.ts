/**
 * The real process: `invoicing serve` started the way operators start it, configured only
 * through the environment (operating contract, sections 1–3).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort, processFixture, runCli } from './helpers/process.js';

// Every case starts real Node processes: generous limits for a loaded CI machine.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const fixture = processFixture('invoicing-process-');
const { freshDatabaseUrl } = fixture;
const serve = (env: Record<string, string>, port?: number) => fixture.serve(env, port);

/** The key printed on first start: the line after the announcement, and the one in the curl line. */
function printedKeys(stdout: string): string[] {
  return [...stdout.matchAll(/\bak_[A-Za-z0-9_-]{20,}/g)].map((m) => m[0]);
}

function writeJson(name: string, value: unknown): string {
  const file = path.join(fixture.dir, name);
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return file;
}

describe('first start on an empty database, then a restart', () => {
  let databaseUrl: string;
  let demoKey: string;

  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
  });

  it('prints the demo key once with a ready curl line, serves with it, and stops on SIGTERM with 0', async () => {
    const service = await serve({ DATABASE_URL: databaseUrl });
    await service.waitUntilHealthy();

    const keys = printedKeys(service.stdout);
    expect(keys.length).toBeGreaterThan(0);
    demoKey = keys[0] as string;
    expect(new Set(keys)).toEqual(new Set([demoKey]));
    const curl = service.stdout.split('\n').find((line) => line.includes('curl'));
    expect(curl).toContain(`x-api-key: ${demoKey}`);
    expect(curl).toContain(`http://localhost:${service.port}/api/v1/ref/catalog`);

    const health = await fetch(`${service.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });

    const catalog = await fetch(`${service.baseUrl}/api/v1/ref/catalog`, { headers: { 'x-api-key': demoKey } });
    expect(catalog.status).toBe(200);
    const body = (await catalog.json()) as { ok: boolean; organizations: Array<{ inn: string }> };
    expect(body.ok).toBe(true);
    expect(body.organizations.map((o) => o.inn)).toContain('7707083893');

    const ready = await fetch(`${service.baseUrl}/readyz`);
    expect(ready.status).toBe(200);

    // The fetches above leave an idle keep-alive connection open: shutdown must not wait on it.
    const started = Date.now();
    const exit = await service.stop('SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(service.stderr).toBe('');
  });

  it('prints no key on the next start, and the first key still works', async () => {
    const service = await serve({ DATABASE_URL: databaseUrl });
    await service.waitUntilHealthy();
    expect(printedKeys(service.stdout)).toEqual([]);
    expect(service.stdout).not.toContain('curl');
    const catalog = await fetch(`${service.baseUrl}/api/v1/ref/catalog`, { headers: { 'x-api-key': demoKey } });
    expect(catalog.status).toBe(200);
    expect(await service.stop('SIGINT')).toEqual({ code: 0, signal: null });
  });
});

describe('a bootstrap file', () => {
  it('is applied at start: its key works and no demo team is created', async () => {
    const file = writeJson('good.json', {
      tariffs: { roomy: { max_api_keys: 5, key_rate: { per_sec: 100, per_min: 1000, per_day: 100000 } } },
      teams: [
        {
          id: 'acme',
          name: 'ACME',
          tariff: 'roomy',
          api_keys: [{ id: 101, name: 'erp', secret: 'ak_process_test_0001' }],
          organizations: [{ id: 'org-1', name: 'ООО «Ромашка»', inn: '7707083893' }],
        },
      ],
    });
    const service = await serve({ DATABASE_URL: await freshDatabaseUrl(), INVOICING_BOOTSTRAP_FILE: file });
    await service.waitUntilHealthy();
    expect(printedKeys(service.stdout)).toEqual([]);
    // The short legacy secret is imported with a warning naming its path, never the secret.
    expect(service.stdout).toContain('$.teams[0].api_keys[0].secret is shorter than 24 characters');
    expect(service.stdout).not.toContain('ak_process_test_0001');

    const catalog = await fetch(`${service.baseUrl}/api/v1/ref/catalog`, { headers: { 'x-api-key': 'ak_process_test_0001' } });
    expect(catalog.status).toBe(200);
    const body = (await catalog.json()) as { organizations: Array<{ id: string }> };
    expect(body.organizations.map((o) => o.id)).toEqual(['org-1']);
    expect(await service.stop()).toEqual({ code: 0, signal: null });
  });
});

describe('bad configuration stops start-up with one line', () => {
  let refusals = 0;
  async function expectRefusal(env: Record<string, string>, needle: string) {
    // A database of its own each: these run concurrently.
    const result = await runCli(['serve'], { DATABASE_URL: `sqlite:${path.join(fixture.dir, `refused-${++refusals}.sqlite`)}`, ...env });
    expect(result.code, result.stderr).not.toBe(0);
    expect(result.code).not.toBeNull();
    const lines = result.stderr.split('\n').filter(Boolean);
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toContain(needle);
    return lines[0] as string;
  }

  it('names the variable of a bad value', async () => {
    await Promise.all([
      expectRefusal({ PORT: 'abc' }, 'PORT'),
      expectRefusal({ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'),
      expectRefusal({ INVOICING_TRUST_PROXY: 'maybe' }, 'INVOICING_TRUST_PROXY'),
    ]);
  });

  it('names the JSON path of the bad field of the bootstrap file, and does not start', async () => {
    const file = writeJson('bad.json', {
      teams: [{ id: 'acme', name: 'ACME', api_keys: [{ id: 'one-hundred-one', name: 'erp', secret: 'ak_bad_0001' }] }],
    });
    const syntax = writeJson('syntax.json', '{ "teams": [ { "id": "acme", } ] }');
    const [line, syntaxLine] = await Promise.all([
      expectRefusal({ INVOICING_BOOTSTRAP_FILE: file }, '$.teams[0].api_keys[0].id'),
      expectRefusal({ INVOICING_BOOTSTRAP_FILE: syntax }, 'line 1'),
      expectRefusal({ INVOICING_BOOTSTRAP_FILE: path.join(fixture.dir, 'missing.json') }, 'INVOICING_BOOTSTRAP_FILE'),
    ]);
    expect(line).toContain('INVOICING_BOOTSTRAP_FILE');
    expect(syntaxLine).toContain('$');
    expect(syntaxLine).not.toContain('ak_');
  });

  it('reports a port already in use in one line, after showing the demo key it created', async () => {
    const port = await freePort();
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const result = await runCli(['serve'], { DATABASE_URL: await freshDatabaseUrl(), PORT: String(port) });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(`127.0.0.1:${port}`);
      expect(printedKeys(result.stdout).length).toBeGreaterThan(0);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
