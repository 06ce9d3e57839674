/**
 * The API description passes Spectral's OWASP API Security ruleset with the
 * repository's .spectral.yaml: 0 errors. Run through the Spectral CLI on the description the
 * app serves, as an operator would run it against a deployment.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

interface Finding {
  code: string;
  severity: number;
  path: string[];
  message: string;
}

async function spectral(doc: unknown): Promise<Finding[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectral-'));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(doc));
  try {
    const { stdout } = await run(
      path.join(ROOT, 'node_modules/.bin/spectral'),
      ['lint', '-r', path.join(ROOT, '.spectral.yaml'), '-f', 'json', '--fail-severity', 'error', '-q', file],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
    ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '[]' }));
    return JSON.parse(stdout || '[]') as Finding[];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const errorsOf = (findings: Finding[]) => findings.filter((f) => f.severity === 0).map((f) => `${f.code} at ${f.path.join('.')}: ${f.message}`);

describe('OpenAPI description under the OWASP API ruleset', () => {
  let t: TestApp;
  let doc: Record<string, any>;
  beforeAll(async () => {
    t = await buildTestApp({ env: { INVOICING_PUBLIC_URL: 'https://invoices.example.com' } });
    doc = (await t.call({ method: 'GET', url: '/api/openapi.json' })).json();
  });
  afterAll(async () => t.close());

  it('has 0 errors for a deployment (https public URL)', async () => {
    expect(errorsOf(await spectral(doc))).toEqual([]);
  }, 60_000);

  it('a local development instance (plain http on localhost) breaks only the https rule', async () => {
    const local = await buildTestApp({ db: t.db });
    try {
      const localDoc = (await local.call({ method: 'GET', url: '/api/openapi.json' })).json();
      expect(localDoc.servers[0]).toMatchObject({ 'x-internal': false });
      expect(localDoc.servers[0].description).toMatch(/local/);
      const codes = new Set((await spectral(localDoc)).filter((f) => f.severity === 0).map((f) => f.code));
      expect([...codes]).toEqual(['owasp:api8:2023-no-server-http']);
    } finally {
      await local.close();
    }
  }, 60_000);

  it('declares the RateLimit headers on every response, Retry-After on 429, and the server audience and environment', () => {
    expect(doc.servers[0]).toMatchObject({ url: 'https://invoices.example.com', 'x-internal': false });
    expect(doc.servers[0].description).toMatch(/production/);
    let responses = 0;
    for (const item of Object.values(doc.paths) as Array<Record<string, any>>) {
      for (const op of Object.values(item)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          responses++;
          expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(['RateLimit', 'RateLimit-Policy', 'Access-Control-Allow-Origin']));
          if (status === '429') expect(response.headers).toHaveProperty('Retry-After');
        }
      }
    }
    expect(responses).toBeGreaterThan(50);
  });

  it('the service sends what the description declares: RateLimit headers and its own origin for CORS', async () => {
    const res = await t.call({ method: 'GET', url: '/api/v1/invoices', headers: { 'x-api-key': 'nope-not-a-key' } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe('https://invoices.example.com');
    expect(res.headers.ratelimit).toBeTruthy();
  });

  it('bounds the request parameters it validates: a header beyond its maxLength is refused', async () => {
    const res = await t.call({
      method: 'POST',
      url: '/api/v1/invoices',
      headers: { 'x-api-key': 'whatever', 'idempotency-key': 'k'.repeat(256) },
      payload: {},
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
  });
});
