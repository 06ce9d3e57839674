/**
 * Share links of a document: one for the buyer, one for colleagues and one per API recipient
 * (deduplicated by address), each with its own random token of 128 bits. A recipient keeps
 * its token across updates; a recipient no longer listed loses its link. The rows, pure but for
 * their random tokens; write/share-links.ts writes them.
 */
import type { ShareLinkRow } from '../../../db/types.js';
import { sortableToken } from '../../../shared/tokens.js';
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

/**
 * What bringing the recipient links in line with `recipients` writes, given the document's
 * links `existing`: kept recipients' new order, name and position (`moved`: only those that
 * differ), the tokens of recipients no longer listed (`removed`), new recipients' links
 * (`fresh`), and every link of the document afterwards in `sort_order` (`result`).
 */
export function planShareLinkSync(
  existing: readonly ShareLinkRow[],
  teamId: string,
  publicId: string,
  recipients: readonly ApiRecipient[],
  now: string,
): { result: ShareLinkRow[]; moved: ShareLinkRow[]; removed: string[]; fresh: ShareLinkRow[] } {
  const byEmail = new Map(existing.filter((l) => l.kind === 'recipient').map((l) => [String(l.email).toLowerCase(), l]));
  const wanted = uniqueRecipients(recipients);
  const keep = new Set<string>();
  const fresh: ShareLinkRow[] = [];
  const moved: ShareLinkRow[] = [];
  const result: ShareLinkRow[] = existing.filter((l) => l.kind !== 'recipient');
  for (const [i, r] of wanted.entries()) {
    const old = byEmail.get(r.email.toLowerCase());
    if (old) {
      keep.add(old.token);
      const updated = { ...old, sort_order: i + 2, name: r.name, position: r.position };
      if (updated.sort_order !== old.sort_order || updated.name !== old.name || updated.position !== old.position) moved.push(updated);
      result.push(updated);
    } else {
      const created = link(teamId, publicId, 'recipient', i + 2, now, r);
      fresh.push(created);
      result.push(created);
    }
  }
  const removed = existing.filter((l) => l.kind === 'recipient' && !keep.has(l.token)).map((l) => l.token);
  return { result: result.sort((a, b) => a.sort_order - b.sort_order), moved, removed, fresh };
}
