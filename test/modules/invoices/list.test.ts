import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { BETA_KEY, bootstrapFixture } from '../../helpers/fixtures.js';
import { ACME, BETA_ORG_INN, createOk, ORG1_INN, put, simpleDoc } from './write-helpers.js';

type Item = Record<string, any>;

const SHARE = 'https://share.example.test/s';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function list(t: TestApp, query: string, headers: Record<string, string> = ACME) {
  return t.call({ method: 'GET', url: `/api/v1/invoices${query ? `?${query}` : ''}`, headers });
}

async function listOk(t: TestApp, query: string, headers: Record<string, string> = ACME): Promise<{ total: number; items: Item[]; limit: number; offset: number }> {
  const res = await list(t, query, headers);
  if (res.statusCode !== 200) throw new Error(`list ${query}: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** Numbers of every match of `q`, in list order. */
async function numbersFor(t: TestApp, q: string): Promise<string[]> {
  const body = await listOk(t, `q=${encodeURIComponent(q)}&limit=200`);
  expect(body.total).toBe(body.items.length);
  return body.items.map((i) => i.number);
}

/**
 * The documents of the list tests. Numbers are unique, so a match is told by its number.
 * Dates and parties vary so that every filter has something to keep and something to drop.
 */
function corpus(): Array<Record<string, any>> {
  const docs: Array<Record<string, any>> = [
    simpleDoc('Q-ALPHA-001', { date: '2026-01-10', buyer: { name: 'ООО «Покупатель»', inn: '7736207543' } }),
    simpleDoc('Q-ALPHA-002', { date: '2026-01-15', buyer: { name: 'ООО «Покупатель»', inn: '7736207543' } }),
    simpleDoc('Q-BETA-003', { date: '2026-01-20', buyer: { name: 'ИП Сидоров Пётр', inn: '500100732259' } }),
    simpleDoc('Q-004', { date: '2026-01-15', buyer: { name: 'АО «Ёлка»', inn: '7830002293' } }),
    simpleDoc('Q-005', { date: '2026-02-01', buyer: { name: 'Globex Corporation' } }),
    simpleDoc('Q-006', { date: '2026-02-01', seller: { name: 'ООО «Ромашка-Север»', inn: ORG1_INN }, buyer: { name: 'Initech' } }),
    // Wildcards of LIKE are literal characters in q.
    simpleDoc('Q-100%-007', { date: '2025-12-31', buyer: { name: 'Percent Ltd' } }),
    simpleDoc('Q-1000-008', { date: '2025-12-31', buyer: { name: 'Zero Ltd' } }),
    simpleDoc('Q-A_B-009', { date: '2025-12-30', buyer: { name: 'Under Score' } }),
    simpleDoc('Q-AXB-010', { date: '2025-12-30', buyer: { name: 'Ex Be' } }),
    // Quotes and FTS5 query syntax are literal too.
    simpleDoc('Q-011', { date: '2025-11-01', buyer: { name: 'ООО "Кавычки" AND OR NEAR(x) *' } }),
    simpleDoc('Q-012', { date: '2025-11-02', buyer: { name: 'Back\\slash Trading' } }),
  ];
  for (let i = 13; i <= 30; i++) {
    const day = String(1 + (i % 28)).padStart(2, '0');
    docs.push(simpleDoc(`F-${String(i).padStart(3, '0')}`, { date: `2025-10-${day}`, buyer: { name: `Filler Buyer ${i}` } }));
  }
  return docs;
}

describe('GET /api/v1/invoices: filters, order and paging (contract 4, Documents → List)', () => {
  let t: TestApp;
  const created = new Map<string, Record<string, any>>();

  beforeAll(async () => {
    t = await buildTestApp({ env: { INVOICING_SHARE_URL: SHARE } });
    for (const doc of corpus()) {
      created.set(doc.number, await createOk(t, doc));
      // Distinct creation instants: the second sort key is the creation time.
      await sleep(2);
    }
  });
  afterAll(async () => t.close());

  describe('q: a case-insensitive substring of number, seller and buyer name and INN', () => {
    it.each([
      ['a number substring', 'alpha', ['Q-ALPHA-002', 'Q-ALPHA-001']],
      ['a number substring, other case', 'Q-aLpHa-00', ['Q-ALPHA-002', 'Q-ALPHA-001']],
      ['Cyrillic in capitals', 'ПОКУП', ['Q-ALPHA-002', 'Q-ALPHA-001']],
      ['Cyrillic in mixed case', 'пОкУпАтЕлЬ', ['Q-ALPHA-002', 'Q-ALPHA-001']],
      ['a buyer name word', 'сидоров', ['Q-BETA-003']],
      ['ё is its own letter', 'ЁЛК', ['Q-004']],
      ['a Latin buyer name', 'GLOBEX corp', ['Q-005']],
      ['a seller name', 'ромашка-СЕВЕР', ['Q-006']],
      ['a buyer INN substring', '3620754', ['Q-ALPHA-002', 'Q-ALPHA-001']],
      ['a 12-digit buyer INN', '500100732259', ['Q-BETA-003']],
      ['a double quote', 'ооо "кавычки"', ['Q-011']],
      ['FTS5 operators', 'and or near(x) *', ['Q-011']],
      ['a backslash', 'k\\s', ['Q-012']],
      ['two characters (below the trigram length)', 'Ёл', ['Q-004']],
      ['one character', 'ё', ['Q-BETA-003', 'Q-004']],
      ['surrounding spaces are ignored', '  globex  ', ['Q-005']],
    ])('matches %s', async (_name, q, expected) => {
      expect(await numbersFor(t, q)).toEqual(expected);
    });

    it('matches the seller INN on every document of the team', async () => {
      expect((await listOk(t, `q=${ORG1_INN.slice(2, 8)}`)).total).toBe(created.size);
      expect((await listOk(t, 'q=РОМАШКА')).total).toBe(created.size);
    });

    it('treats % and _ as literal characters', async () => {
      expect(await numbersFor(t, '100%')).toEqual(['Q-100%-007']);
      expect(await numbersFor(t, '%')).toEqual(['Q-100%-007']);
      expect(await numbersFor(t, 'a_b')).toEqual(['Q-A_B-009']);
      expect(await numbersFor(t, '_')).toEqual(['Q-A_B-009']);
      expect(await numbersFor(t, 'q-1000')).toEqual(['Q-1000-008']);
    });

    it('does not match across two fields', async () => {
      // Number "Q-005" is followed by the seller name in the search text, never by a space.
      expect(await numbersFor(t, '005 ооо')).toEqual([]);
      expect(await numbersFor(t, 'Q-005')).toEqual(['Q-005']);
    });

    it('finds nothing for a substring no document has', async () => {
      expect(await listOk(t, `q=${encodeURIComponent('нет такого')}`)).toMatchObject({ total: 0, items: [] });
    });

    it('refuses a q longer than 200 characters', async () => {
      const res = await list(t, `q=${'x'.repeat(201)}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid_query' });
    });
  });

  describe('date_from and date_to: inclusive bounds on the document date', () => {
    it('keeps documents dated on either bound', async () => {
      const body = await listOk(t, 'date_from=2026-01-15&date_to=2026-01-20');
      expect(body.items.map((i) => i.number)).toEqual(['Q-BETA-003', 'Q-004', 'Q-ALPHA-002']);
      expect(body.total).toBe(3);
    });

    it('a single day', async () => {
      const body = await listOk(t, 'date_from=2026-01-15&date_to=2026-01-15');
      expect(body.items.map((i) => i.number).sort()).toEqual(['Q-004', 'Q-ALPHA-002']);
    });

    it('each bound alone, and combined with q', async () => {
      expect((await listOk(t, 'date_from=2026-01-20&limit=200')).items.map((i) => i.number)).toEqual(['Q-006', 'Q-005', 'Q-BETA-003']);
      expect((await listOk(t, 'date_to=2025-11-01&limit=200')).items.every((i) => i.date <= '2025-11-01')).toBe(true);
      expect((await listOk(t, `date_to=2026-01-12&q=${encodeURIComponent('покупатель')}`)).items.map((i) => i.number)).toEqual(['Q-ALPHA-001']);
    });

    it.each(['date_from=2026-13-01', 'date_to=yesterday', 'date_from=2026-02-30', 'date_from=2026-02-01&date_to=2026-01-01'])(
      'refuses %s with 400 invalid_query',
      async (query) => {
        const res = await list(t, query);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ ok: false, error: 'invalid_query' });
      },
    );
  });

  describe('order', () => {
    it('is date descending, then creation descending', async () => {
      const { items } = await listOk(t, 'limit=200');
      expect(items).toHaveLength(created.size);
      const expected = [...items].sort((a, b) => (a.date === b.date ? b.created_at.localeCompare(a.created_at) : b.date.localeCompare(a.date)));
      expect(items.map((i) => i.number)).toEqual(expected.map((i) => i.number));
      // Same date: the later creation first (Q-006 was created after Q-005).
      expect(items.slice(0, 2).map((i) => i.number)).toEqual(['Q-006', 'Q-005']);
      expect(items.find((i) => i.number === 'Q-004')!.created_at > items.find((i) => i.number === 'Q-ALPHA-002')!.created_at).toBe(true);
    });

    it('pages cut the same order', async () => {
      const all = (await listOk(t, 'limit=200')).items.map((i) => i.number);
      const paged: string[] = [];
      for (let offset = 0; offset < all.length; offset += 7) {
        const page = await listOk(t, `limit=7&offset=${offset}`);
        expect(page.total).toBe(all.length);
        paged.push(...page.items.map((i) => i.number));
      }
      expect(paged).toEqual(all);
    });
  });

  describe('limit, offset and total', () => {
    it('total counts every match whatever the page', async () => {
      const first = await listOk(t, 'limit=1');
      expect(first.items).toHaveLength(1);
      expect(first.total).toBe(created.size);
      const beyond = await listOk(t, `offset=${created.size + 5}`);
      expect(beyond).toMatchObject({ total: created.size, items: [], offset: created.size + 5 });
      const filtered = await listOk(t, `q=alpha&limit=1&offset=1`);
      expect(filtered.total).toBe(2);
      expect(filtered.items.map((i) => i.number)).toEqual(['Q-ALPHA-001']);
    });

    it('accepts limit 1 and 200 and echoes limit and offset', async () => {
      expect(await listOk(t, 'limit=1')).toMatchObject({ limit: 1, offset: 0 });
      expect(await listOk(t, 'limit=200&offset=3')).toMatchObject({ limit: 200, offset: 3 });
    });

    it.each(['limit=0', 'limit=201', 'limit=-1', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=abc'])('refuses %s with 400 invalid_query', async (query) => {
      const res = await list(t, query);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid_query' });
    });
  });

  describe('updated_since', () => {
    it('returns documents modified at or after the instant, not older ones', async () => {
      await sleep(5);
      const since = new Date().toISOString();
      await sleep(5);
      const target = created.get('Q-004')!;
      const doc = { ...simpleDoc('Q-004', { date: '2026-01-15', buyer: { name: 'АО «Ёлка»', inn: '7830002293' } }) };
      const res = await put(t, target.public_id, { invoice: doc });
      expect(res.statusCode).toBe(200);
      const body = await listOk(t, `updated_since=${encodeURIComponent(since)}`);
      expect(body.items.map((i) => i.number)).toEqual(['Q-004']);
      expect(body.total).toBe(1);
      expect(body.items[0]!.last_modified_at > body.items[0]!.created_at).toBe(true);
      // An instant with an offset means the same moment.
      const local = new Date(Date.parse(since) + 3 * 3_600_000).toISOString().replace('Z', '+03:00');
      expect((await listOk(t, `updated_since=${encodeURIComponent(local)}`)).items.map((i) => i.number)).toEqual(['Q-004']);
      expect((await listOk(t, 'updated_since=2000-01-01T00:00:00Z')).total).toBe(created.size);
    });

    it.each(['updated_since=yesterday', 'updated_since=2026-13-40T00:00:00Z'])('refuses %s with 400 invalid_query', async (query) => {
      const res = await list(t, query);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid_query' });
    });

    it('answers a leap second (valid RFC 3339, not a JavaScript Date) without a 500', async () => {
      const res = await list(t, `updated_since=${encodeURIComponent('2026-06-30T23:59:60Z')}`);
      expect(res.statusCode).not.toBe(500);
      if (res.statusCode === 400) expect(res.json()).toMatchObject({ ok: false, error: 'invalid_query' });
    });
  });

  describe('items', () => {
    it('carry the fields the contract lists, as the document is', async () => {
      const body = await listOk(t, 'q=globex');
      const item = body.items[0]!;
      const doc = created.get('Q-005')!;
      expect(Object.keys(item).sort()).toEqual(
        [
          'public_id',
          'number',
          'date',
          'currency',
          'direction',
          'seller_name',
          'seller_inn',
          'buyer_name',
          'buyer_inn',
          'totals',
          'status',
          'editor_mode',
          'created_at',
          'last_modified_at',
          'changed_at',
          'invoice_url',
        ].sort(),
      );
      expect(item).toEqual({
        public_id: doc.public_id,
        number: 'Q-005',
        date: '2026-02-01',
        currency: 'RUB',
        direction: 'outgoing',
        seller_name: 'ООО «Ромашка»',
        seller_inn: ORG1_INN,
        buyer_name: 'Globex Corporation',
        buyer_inn: null,
        totals: { subtotal: 100, vat_total: 22, total: 122 },
        status: doc.status,
        editor_mode: 'api',
        created_at: doc.metadata.created_at,
        last_modified_at: doc.metadata.last_modified_at,
        changed_at: doc.metadata.changed_at,
        invoice_url: doc.invoice_url,
      });
      expect(item.invoice_url.startsWith(`${SHARE}/`)).toBe(true);
      expect(item.status).toMatchObject({ seller_status: 'issued', seller_status_label: 'Выставлен', buyer_status: 'not_sent' });
    });

    it('invoice_url opens the buyer share page of that document', async () => {
      const [item] = (await listOk(t, 'q=initech')).items;
      expect(item!.invoice_url).toBe(created.get('Q-006')!.invoice_url);
    });
  });
});

describe('GET /api/v1/invoices: the default page', () => {
  let t: TestApp;
  const BETA = { 'x-api-key': BETA_KEY };
  beforeAll(async () => {
    // beta on the fixture's generous tariff: 52 requests in a second exceed the default per-key rate.
    const fixture = bootstrapFixture();
    t = await buildTestApp({ bootstrap: { ...fixture, teams: fixture.teams.map((team) => (team.id === 'beta' ? { ...team, tariff: 'basic' } : team)) } });
    for (let i = 1; i <= 51; i++) {
      const res = await t.call({
        method: 'POST',
        url: '/api/v1/invoices',
        headers: BETA,
        payload: simpleDoc(`D-${String(i).padStart(2, '0')}`, { seller: { inn: BETA_ORG_INN } }),
      });
      if (res.statusCode !== 200) throw new Error(res.body);
      await sleep(2);
    }
  });
  afterAll(async () => t.close());

  it('has 50 items, offset 0, and the total of all', async () => {
    const body = await listOk(t, '', BETA);
    expect(body).toMatchObject({ total: 51, limit: 50, offset: 0 });
    expect(body.items).toHaveLength(50);
    // One date, so the newest creation comes first.
    expect(body.items[0]!.number).toBe('D-51');
    expect((await listOk(t, 'offset=50', BETA)).items.map((i) => i.number)).toEqual(['D-01']);
  });
});
