/**
 * The published description (spec sections 1.11, 4, 5, 9): JSON and YAML forms of one
 * OpenAPI 3.1 document, complete enough to build a client from, and clean under
 * `redocly lint` with the repository's redocly.yaml.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const DEMO_TOKEN = 'demo-token-openapi-test';
const DEMO_PUBLIC_ID = 'demo-inv-openapi';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

interface Response {
  description?: string;
  content?: Record<string, { schema?: { $ref?: string } }>;
}
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
  responses?: Record<string, Response>;
}
interface Doc {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, Record<string, string>>; schemas: Record<string, unknown> };
}

function operations(doc: Doc): Array<{ method: string; path: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, op]) => ({ method, path: p, op })),
  );
}

describe('OpenAPI description', () => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await buildTestApp({ env: { INVOICING_DEMO_TOKEN: DEMO_TOKEN, INVOICING_DEMO_PUBLIC_ID: DEMO_PUBLIC_ID } });
    doc = (await t.call({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
  });
  afterAll(async () => t.close());

  it('is served as application/json, OpenAPI 3.1.0, version 1.0.0, without a key', async () => {
    const res = await t.call({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json\b/);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.info.title).toBeTruthy();
  });

  it('defines the three ways to send the key', () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes.ApiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    expect(schemes.BearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.ApiKeyQuery).toMatchObject({ type: 'apiKey', in: 'query', name: 'api_key' });
  });

  it('publishes the configured demo token and demo document id', () => {
    const text = JSON.stringify(doc);
    expect(text).toContain(DEMO_TOKEN);
    expect(text).toContain(DEMO_PUBLIC_ID);
    expect(text).not.toContain('{DEMO_TOKEN}');
    expect(text).not.toContain('{DEMO_PUBLIC_ID}');
  });

  it('documents every endpoint of the spec with at least its listed statuses', () => {
    const expected: Record<string, string[]> = {
      'get /api/openapi.yaml': ['200'],
      'get /api/openapi.json': ['200'],
      'get /api/v1/ref/catalog': ['200', '401', '403', '429'],
      'get /api/v1/invoices': ['200', '401', '403', '429'],
      'post /api/v1/invoices': ['200', '207', '400', '401', '403', '409', '413', '429'],
      'get /api/v1/invoices/{public_id}': ['200', '401', '403', '404', '429'],
      'put /api/v1/invoices/{public_id}': ['200', '207', '400', '401', '403', '404', '409', '413', '429'],
    };
    for (const [key, statuses] of Object.entries(expected)) {
      const [method, p] = key.split(' ') as [string, string];
      const op = doc.paths[p]?.[method];
      expect(op, key).toBeDefined();
      expect(Object.keys(op?.responses ?? {}), key).toEqual(expect.arrayContaining(statuses));
    }
    for (const key of ['post /api/v1/invoices', 'put /api/v1/invoices/{public_id}']) {
      const [method, p] = key.split(' ') as [string, string];
      const body = doc.paths[p]?.[method]?.requestBody;
      expect(body?.required, key).toBe(true);
      expect(Object.keys(body?.content ?? {}), key).toEqual(['application/json']);
    }
    const list = doc.paths['/api/v1/invoices']?.get?.parameters ?? [];
    expect(list.filter((q) => q.in === 'query').map((q) => q.name)).toEqual(
      expect.arrayContaining(['q', 'date_from', 'date_to', 'limit', 'offset']),
    );
  });

  it('gives every operation a unique operationId, a summary and a description', () => {
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThanOrEqual(7);
    for (const { method, path: p, op } of ops) {
      const where = `${method.toUpperCase()} ${p}`;
      expect(op.operationId, where).toMatch(/^[A-Za-z][A-Za-z0-9]+$/);
      expect(op.summary?.trim(), where).toBeTruthy();
      expect(op.description?.trim(), where).toBeTruthy();
    }
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes every response, and every error response is an ErrorBody', () => {
    expect(doc.components.schemas.ErrorBody).toBeDefined();
    for (const { method, path: p, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const where = `${method.toUpperCase()} ${p} ${status}`;
        expect(response.description?.trim(), where).toBeTruthy();
        expect(response.description, where).not.toBe('Default Response');
        if (Number(status) >= 400) {
          expect(Object.keys(response.content ?? {}), where).toEqual(['application/json']);
          expect(response.content?.['application/json']?.schema?.$ref, where).toBe('#/components/schemas/ErrorBody');
        }
      }
    }
  });

  it('states who needs a key: /api/v1/* does, the descriptions and operations routes do not', () => {
    for (const { method, path: p, op } of operations(doc)) {
      const where = `${method.toUpperCase()} ${p}`;
      if (p.startsWith('/api/v1/')) {
        const ways = (op.security ?? []).flatMap((s) => Object.keys(s));
        expect(ways, where).toEqual(expect.arrayContaining(['ApiKeyHeader', 'BearerAuth']));
        expect(Object.keys(op.responses ?? {}), where).toContain('401');
      } else {
        expect(op.security, where).toEqual([]);
      }
    }
  });

  it('offers the api_key query parameter for reads only (a write with it is 401)', () => {
    for (const { method, path: p, op } of operations(doc)) {
      if (!p.startsWith('/api/v1/')) continue;
      const ways = (op.security ?? []).flatMap((s) => Object.keys(s));
      if (method === 'get') expect(ways, `GET ${p}`).toContain('ApiKeyQuery');
      else expect(ways, `${method.toUpperCase()} ${p}`).not.toContain('ApiKeyQuery');
    }
  });

  it('is served as application/yaml too, parsing to the same document', async () => {
    const res = await t.call({ method: 'GET', url: '/api/openapi.yaml' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/yaml\b/);
    expect(parseYaml(res.body)).toEqual(doc);
  });

  it('serves the documentation page', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html\b/);
    expect(res.body).toMatch(/<html/i);
  });

  it('passes redocly lint', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(doc, null, 2));
    try {
      const result = await run(
        path.join(ROOT, 'node_modules/.bin/redocly'),
        ['lint', '--format=stylish', `--config=${path.join(ROOT, 'redocly.yaml')}`, file],
        {
          cwd: ROOT,
          timeout: 60_000,
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        },
      ).catch((err: { code?: number; stdout?: string; stderr?: string }) => {
        throw new Error(`redocly lint failed (exit ${String(err.code)}):\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
      });
      const output = `${result.stdout}\n${result.stderr}`;
      expect(output).toMatch(/valid/i);
      expect(output, output).not.toMatch(/\b(error|warning)\s{2,}/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
