/**
 * The typed-client example (examples/typed-client/) against the real app on a real port, and a
 * guard that its generated `schema.d.ts` is exactly what openapi-typescript makes of the
 * description the app serves, so the example cannot drift from the API.
 */
import fs from 'node:fs';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createInvoice,
  createInvoicingClient,
  describeError,
  getInvoice,
  listInvoices,
  runExampleFlow,
  sampleInvoice,
  type ApiResult,
  type InvoicingClient,
} from '../../examples/typed-client/client.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ACME_KEY, BETA_KEY, bootstrapFixture } from '../helpers/fixtures.js';

const SCHEMA_FILE = new URL('../../examples/typed-client/schema.d.ts', import.meta.url);

/** The app listening on a free local port; returns its base URL. */
async function listen(t: TestApp): Promise<string> {
  return t.app.listen({ port: 0, host: '127.0.0.1' });
}

/** Narrows a result to its success, failing the test with the error otherwise. */
function expectOk<T>(result: ApiResult<T>): T {
  if (!result.ok) throw new Error(`expected success, got HTTP ${result.status}: ${JSON.stringify(result.error)}`);
  return result.data;
}

describe('examples/typed-client against the running service', () => {
  let t: TestApp;
  let baseUrl: string;
  let acme: InvoicingClient;

  beforeAll(async () => {
    t = await buildTestApp();
    baseUrl = await listen(t);
    acme = createInvoicingClient({ baseUrl, apiKey: ACME_KEY });
  });
  afterAll(async () => t.close());

  it('creates, reads back and lists a document', async () => {
    const result = await runExampleFlow(acme, sampleInvoice('TC-1', '2026-03-02'), { actorLogin: 'typed-client' });
    const { created, fetched, etag, listed } = expectOk(result);
    expect(result.status).toBe(200);

    expect(created.ok).toBe(true);
    expect(created.demo_mode).toBeUndefined();
    expect(created.metadata.editor_mode).toBe('api');
    expect(created.metadata.created_by_login).toBe('typed-client');
    // 3 × 1500.50 = 4501.50 + 22 % VAT 990.33; 333.33 без НДС.
    expect(created.totals).toMatchObject({ subtotal: 4834.83, vat_total: 990.33, total: 5825.16, currency: 'RUB' });
    expect(created.invoice).toMatchObject({ number: 'TC-1', seller: { inn: '7707083893', bik: '044525225' } });

    expect(fetched.public_id).toBe(created.public_id);
    expect(fetched.status.seller_status).toBe('issued');
    expect(etag).toBe(`"${created.public_id}.1"`);
    expect(listed.total).toBe(1);
    expect(listed.items.map((i) => i.public_id)).toEqual([created.public_id]);
  });

  it('sends the Idempotency-Key, so a repeated create returns the first document', async () => {
    const doc = sampleInvoice('TC-2', '2026-03-03');
    const first = expectOk(await createInvoice(acme, doc, { idempotencyKey: 'tc-order-2' }));
    const again = expectOk(await createInvoice(acme, doc, { idempotencyKey: 'tc-order-2' }));
    expect(again.public_id).toBe(first.public_id);
    expect(expectOk(await listInvoices(acme, { q: 'TC-2' })).total).toBe(1);

    const reused = await createInvoice(acme, sampleInvoice('TC-2b', '2026-03-03'), { idempotencyKey: 'tc-order-2' });
    expect(reused.ok).toBe(false);
    if (reused.ok) return;
    expect(reused.status).toBe(409);
    expect(reused.error.error).toBe('idempotency_key_reused');
  });

  it('pages the list with the typed query parameters', async () => {
    for (const n of ['TC-P1', 'TC-P2', 'TC-P3']) expectOk(await createInvoice(acme, sampleInvoice(n, '2026-04-01')));
    const page = expectOk(await listInvoices(acme, { q: 'TC-P', date_from: '2026-04-01', date_to: '2026-04-01', limit: 2, offset: 0 }));
    expect(page).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect(page.items).toHaveLength(2);
    const rest = expectOk(await listInvoices(acme, { q: 'TC-P', limit: 2, offset: 2 }));
    expect(rest.items).toHaveLength(1);
    const since = expectOk(await listInvoices(acme, { updated_since: '2999-01-01T00:00:00Z' }));
    expect(since.total).toBe(0);
  });

  it('returns the error body, narrowed on error.error, for each kind of refusal', async () => {
    const invalid = await createInvoice(acme, { ...sampleInvoice('TC-E1', '2026-02-30'), buyer: {} as { name: string } });
    expect(invalid.ok).toBe(false);
    if (invalid.ok) return;
    expect(invalid.status).toBe(400);
    expect(invalid.error.error).toBe('validation_failed');
    expect(invalid.error.missing_fields).toEqual(['buyer.name']);
    expect(describeError(invalid)).toBe('the document was refused: missing: buyer.name; invalid: date (invalid_date)');

    const foreignSeller = await createInvoice(acme, { ...sampleInvoice('TC-E2', '2026-03-02'), seller: { inn: '500100732259' } });
    expect(foreignSeller).toMatchObject({ ok: false, status: 403, error: { error: 'seller_org_not_allowed' } });

    const missing = await getInvoice(acme, 'no-such-document');
    expect(missing).toMatchObject({ ok: false, status: 404, error: { error: 'document_not_found', document_public_id: 'no-such-document' } });
    if (!missing.ok) expect(describeError(missing)).toBe('no document no-such-document in this team');

    const badQuery = await listInvoices(acme, { limit: 500 });
    expect(badQuery).toMatchObject({ ok: false, status: 400, error: { error: 'invalid_query' } });

    const stranger = createInvoicingClient({ baseUrl, apiKey: 'ak_nobody' });
    const refused = await listInvoices(stranger);
    expect(refused).toMatchObject({ ok: false, status: 401, error: { error: 'unauthorized', code: 'api_key_invalid' } });
    if (!refused.ok) expect(describeError(refused)).toMatch(/^the API key was refused \(api_key_invalid\)/);
  });

  it("never shows another team's document", async () => {
    const created = expectOk(await createInvoice(acme, sampleInvoice('TC-T1', '2026-03-02')));
    const beta = createInvoicingClient({ baseUrl, apiKey: BETA_KEY });
    const read = await getInvoice(beta, created.public_id);
    expect(read).toMatchObject({ ok: false, status: 404, error: { error: 'document_not_found' } });
  });

  it('runs the flow in demo mode: nothing stored, the sample document read back', async () => {
    const demo = createInvoicingClient({ baseUrl, apiKey: t.config.demoToken });
    const result = await runExampleFlow(demo, sampleInvoice('TC-D1', '2026-03-02'));
    const { created, fetched } = expectOk(result);
    expect(created.demo_mode).toBe(true);
    // The created id is not stored: getInvoice got 404 with demo_public_id and the flow followed it.
    expect(fetched.public_id).toBe(t.config.demoPublicId);
    expect(fetched.demo_mode).toBe(true);
    const notStored = await getInvoice(demo, created.public_id);
    expect(notStored).toMatchObject({ ok: false, status: 404, error: { error: 'document_not_found', demo_public_id: t.config.demoPublicId } });
  });
});

describe('examples/typed-client retries', () => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    t = await buildTestApp({ bootstrap: bootstrapFixture({ basicKeyRate: { per_sec: 1, per_min: 1000, per_day: 100000 } }) });
    baseUrl = await listen(t);
  });
  afterAll(async () => t.close());

  it('waits Retry-After on 429 and tries again', async () => {
    const statuses: number[] = [];
    const refusals: unknown[] = [];
    const acme = createInvoicingClient({
      baseUrl,
      apiKey: ACME_KEY,
      fetch: async (request) => {
        const response = await fetch(request);
        statuses.push(response.status);
        if (response.status === 429) refusals.push({ retryAfter: response.headers.get('retry-after'), body: await response.clone().json() });
        return response;
      },
    });
    // The key may make one request per second: a request, then listInvoices in the same second,
    // whose first attempt is refused. Should the two straddle a second, try again.
    for (let attempt = 0; attempt < 10 && refusals.length === 0; attempt++) {
      statuses.length = 0;
      await acme.GET('/api/v1/invoices');
      expectOk(await listInvoices(acme));
    }
    expect(refusals[0]).toEqual({
      retryAfter: '1',
      body: { ok: false, error: 'rate_limited', code: 'key_per_sec', details: expect.any(String), retry_after_sec: 1 },
    });
    // The first attempt was refused, the retry after Retry-After succeeded.
    expect(statuses.slice(-2)).toEqual([429, 200]);
  });
});

describe('examples/typed-client/schema.d.ts', () => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    t = await buildTestApp();
    baseUrl = await listen(t);
  });
  afterAll(async () => t.close());

  it('is what openapi-typescript generates from the live /api/openapi.json', async () => {
    const response = await fetch(`${baseUrl}/api/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as OpenAPI3;
    // The CLI (generate.sh) writes exactly COMMENT_HEADER + astToString(openapiTS(document)).
    const generated = COMMENT_HEADER + astToString(await openapiTS(document, { silent: true }));
    const committed = fs.readFileSync(SCHEMA_FILE, 'utf8');
    if (generated !== committed) {
      const a = committed.split('\n');
      const b = generated.split('\n');
      let line = 0;
      while (line < Math.max(a.length, b.length) && a[line] === b[line]) line++;
      throw new Error(
        `examples/typed-client/schema.d.ts no longer matches the API description the service serves ` +
          `(first difference at line ${line + 1}:\n  committed: ${JSON.stringify(a[line] ?? '<end of file>')}\n  generated: ${JSON.stringify(b[line] ?? '<end of file>')}).\n` +
          `Regenerate it with examples/typed-client/generate.sh, then fix examples/typed-client/client.ts if it no longer compiles (npm run typecheck).`,
      );
    }
  });
});
