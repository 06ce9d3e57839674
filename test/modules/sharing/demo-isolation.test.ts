/**
 * Demo mode never resolves to stored data of any team. The hostile sequence:
 * a database that has a real team whose id is `demo` (what the first start created before), a
 * dry-run write with the published demo token naming that team's real document, then its
 * portal edit link opened and saved. The real document must stay unseen and unchanged.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SECRET, type TestApp } from '../../helpers/app.js';
import { bootstrapFixture } from '../../helpers/fixtures.js';
import { seedDemoTeamIfEmpty } from '../../../src/modules/teams/bootstrap.js';
import { applyBootstrap, parseBootstrap } from '../../../src/modules/teams/bootstrap.js';
import { systemClock } from '../../../src/shared/clock.js';
import { createTestDb } from '../../helpers/db.js';
import { buildSharingApp, createDocument, documentWithRecipients, getDocument, request, urlencoded } from './link-helpers.js';
import { formFields } from './page-fixtures.js';

const DEMO = { 'x-api-key': 'demo-token' } as const;
const LEGACY_KEY = 'ak_legacy_demo_team_0001';
const SECRET_NAME = 'ООО «Тайный покупатель»';

let t: TestApp;

beforeAll(async () => {
  const fixture = bootstrapFixture();
  // A real team with the id the demo world used to act as (an old first start created it).
  const legacyTeam = {
    id: 'demo',
    name: 'Demo team',
    api_keys: [{ id: 901, name: 'demo', secret: LEGACY_KEY, active: true }],
    organizations: [{ id: 'org-1', name: 'ООО «Ромашка»', inn: '7707083893', active: true }],
  };
  t = await buildSharingApp({ bootstrap: { ...fixture, teams: [...fixture.teams, legacyTeam] } });
});

afterAll(async () => {
  await t?.close();
});

function post(url: string, fields: Record<string, string | string[]>) {
  return request(t, url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: urlencoded(fields) });
}

/** An old-format (four-part) portal token, as signed before link epochs. */
function legacyToken(teamId: string, publicId: string, mode: 'view' | 'edit'): string {
  const payload = Buffer.from(JSON.stringify([teamId, publicId, mode, 4_000_000_000]), 'utf8').toString('base64url');
  return `${payload}.${crypto.createHmac('sha256', TEST_SECRET).update(payload).digest('base64url')}`;
}

describe('the demo token and a real document of team "demo"', () => {
  it('a dry-run write naming the real public_id gets links that show the sample and change nothing', async () => {
    const real = await createDocument(t, documentWithRecipients({ buyer: { name: SECRET_NAME, inn: '7736207543' } }), { 'x-api-key': LEGACY_KEY });
    expect(real.metadata.revision).toBe(1);

    const dry = await t.call({
      method: 'POST',
      url: '/api/v1/invoices',
      headers: { ...DEMO, host: 'api.test' },
      payload: { ...documentWithRecipients(), public_id: real.public_id } as never,
    });
    expect(dry.statusCode).toBe(200);
    const links = dry.json();
    expect(links.demo_mode).toBe(true);

    for (const url of [links.portal_view_url, links.portal_document_view_url, links.portal_edit_url]) {
      const page = await request(t, url);
      expect(page.statusCode, url).toBe(200);
      expect(page.body, url).not.toContain('Тайный покупатель');
    }
    const pdf = await request(t, `${new URL(links.portal_view_url).origin}${new URL(links.portal_view_url).pathname}/document.pdf`);
    expect(pdf.statusCode).toBe(200);

    const edit = await request(t, links.portal_edit_url);
    const saved = await post(links.portal_edit_url, { ...formFields(edit.body), 'buyer.name': 'ООО «Захватчик»' });
    expect([200, 303]).toContain(saved.statusCode);
    expect(saved.headers.location).toBeUndefined();

    const after = await getDocument(t, real.public_id, { 'x-api-key': LEGACY_KEY });
    expect(after.metadata.revision).toBe(1);
    expect(after.invoice.buyer.name).toBe(SECRET_NAME);
    expect(after.metadata.editor_mode).not.toBe('portal');
  });

  it('old-format portal tokens naming team "demo" are refused; the real team gets new links', async () => {
    const real = await createDocument(t, documentWithRecipients(), { 'x-api-key': LEGACY_KEY });
    const base = new URL(real.portal_view_url).origin + '/portal';
    expect((await request(t, `${base}/view/${legacyToken('demo', real.public_id, 'view')}`)).statusCode).toBe(404);
    expect((await request(t, `${base}/edit/${legacyToken('demo', real.public_id, 'edit')}`)).statusCode).toBe(404);
    // The links the API hands out now work (epoch format).
    expect((await request(t, real.portal_view_url)).statusCode).toBe(200);
  });

  it('old-format tokens of any other team still open (epoch 0)', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const base = new URL(doc.portal_view_url).origin + '/portal';
    expect((await request(t, `${base}/view/${legacyToken('acme', doc.public_id, 'view')}`)).statusCode).toBe(200);
  });
});

describe('the first start', () => {
  it('creates a real team whose id is random, never the demo id, and refuses the demo id in a bootstrap file', async () => {
    const db = await createTestDb();
    try {
      const seeded = await seedDemoTeamIfEmpty(db.db, systemClock);
      expect(seeded?.teamId).toMatch(/^team-/);
      expect(seeded?.teamId).not.toBe('demo');
      expect(() => parseBootstrap(JSON.stringify({ teams: [{ id: '~demo', name: 'x' }] }))).toThrow();
      await expect(applyBootstrap(db.db, parseBootstrap(JSON.stringify({ teams: [{ id: 'ok-team', name: 'x' }] })), systemClock)).resolves.toBeTruthy();
    } finally {
      await db.drop();
    }
  });
});
