/**
 * Share links of a document: one for the buyer, one for colleagues and one per API recipient
 * (deduplicated by address), each with its own random token of 128 bits. A recipient keeps
 * its token across updates; a recipient no longer listed loses its link.
 */
import type { Executor } from '../../db/database.js';
import type { ShareLinkRow } from '../../db/types.js';
import { sortableToken } from '../../shared/tokens.js';
import * as repo from './invoice.repository.js';
import type { ApiRecipient } from './invoice.model.js';

interface Recipient {
  email: string;
  name: string | null;
  position: string | null;
}

/** Recipients with an address, first occurrence wins, compared case-insensitively. */
export function uniqueRecipients(recipients: readonly ApiRecipient[]): Recipient[] {
  const seen = new Set<string>();
  const out: Recipient[] = [];
  for (const r of recipients) {
    const email = typeof r.email === 'string' ? r.email.trim() : '';
    if (email === '') continue;
    const key = email.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({
      email,
      name: typeof r.name === 'string' ? r.name : null,
      position: typeof r.position === 'string' ? r.position : null,
    });
  }
  return out;
}

function link(teamId: string, publicId: string, kind: ShareLinkRow['kind'], order: number, now: string, r?: Recipient): ShareLinkRow {
  return {
    team_id: teamId,
    public_id: publicId,
    token: sortableToken(),
    kind,
    email: r?.email ?? null,
    name: r?.name ?? null,
    position: r?.position ?? null,
    sort_order: order,
    created_at: now,
    last_opened_at: null,
  };
}

export function newShareLinks(teamId: string, publicId: string, recipients: readonly ApiRecipient[], now: string): ShareLinkRow[] {
  return [
    link(teamId, publicId, 'buyer', 0, now),
    link(teamId, publicId, 'colleague', 1, now),
    ...uniqueRecipients(recipients).map((r, i) => link(teamId, publicId, 'recipient', i + 2, now, r)),
  ];
}

/** Brings the recipient links in line with `recipients`; returns every link of the document. */
export async function syncShareLinks(
  db: Executor,
  teamId: string,
  publicId: string,
  recipients: readonly ApiRecipient[],
  now: string,
): Promise<ShareLinkRow[]> {
  const existing = await repo.listShareLinks(db, teamId, publicId);
  const byEmail = new Map(existing.filter((l) => l.kind === 'recipient').map((l) => [String(l.email).toLowerCase(), l]));
  const wanted = uniqueRecipients(recipients);
  const keep = new Set<string>();
  const fresh: ShareLinkRow[] = [];
  const result: ShareLinkRow[] = existing.filter((l) => l.kind !== 'recipient');
  for (const [i, r] of wanted.entries()) {
    const old = byEmail.get(r.email.toLowerCase());
    if (old) {
      keep.add(old.token);
      const updated = { ...old, sort_order: i + 2, name: r.name, position: r.position };
      await repo.updateShareLinkOrder(db, teamId, old.token, { sort_order: updated.sort_order, name: r.name, position: r.position });
      result.push(updated);
    } else {
      const created = link(teamId, publicId, 'recipient', i + 2, now, r);
      fresh.push(created);
      result.push(created);
    }
  }
  const removed = existing.filter((l) => l.kind === 'recipient' && !keep.has(l.token)).map((l) => l.token);
  await repo.deleteShareLinks(db, teamId, publicId, removed);
  await repo.insertShareLinks(db, fresh);
  return result.sort((a, b) => a.sort_order - b.sort_order);
}
