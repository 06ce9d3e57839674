/** The scale-out test's documents: the bodies it creates, one node's create and read, and concurrent lanes. */
import type { ServiceProcess } from './helpers/process.js';

/** The team the documents are created for: its key, its seller's INN, the EDO id of EDO buyers. */
export interface DocumentTeam {
  key: string;
  sellerInn: string;
  buyerEdoId: string;
}

export type Kind = 'plain' | 'email' | 'edo';

function documentBody(team: DocumentTeam, number: string, kind: Kind): Record<string, unknown> {
  const invoice: Record<string, unknown> = {
    number,
    date: '2026-03-02',
    currency: 'RUB',
    seller: { inn: team.sellerInn },
    buyer: { name: 'ООО «Покупатель»' },
    items: [
      { name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 },
      { name: 'Лицензия', qty: 1, price: 9999.99, vat_pct: 22 },
      { name: 'Внедрение', qty: 2, unit: 'дн', price: 24000, vat_pct: 22 },
    ],
  };
  if (kind === 'email') invoice.api_recipients = [{ email: `${number.toLowerCase()}@buyer.example`, name: 'Покупатель' }];
  if (kind === 'edo') invoice.buyer_edo_id = team.buyerEdoId;
  return kind === 'email' ? { invoice, notify_recipients: true } : { invoice };
}

export interface Acknowledged {
  publicId: string;
  number: string;
  etag: string | null;
}

/** A document's POST and GET on one node, as `team`. */
export function documentClient(team: DocumentTeam) {
  /** POST a document; the acknowledgement, or null when the node answered nothing (killed). */
  async function create(node: ServiceProcess, number: string, kind: Kind): Promise<Acknowledged | null> {
    let res: Response;
    try {
      res = await fetch(`${node.baseUrl}/api/v1/invoices`, {
        method: 'POST',
        headers: { 'x-api-key': team.key, 'content-type': 'application/json' },
        body: JSON.stringify(documentBody(team, number, kind)),
      });
    } catch {
      return null;
    }
    const text = await res.text().catch(() => null);
    if (text === null) return null;
    // An API node without the in-process worker queues e-mail for the workers: 207, every e-mail
    // `retrying` with no attempt yet (docs/notifications.md). Anything else is a failure.
    const body = res.status === 200 || res.status === 207 ? (JSON.parse(text) as { public_id: string; notifications?: { failed: Array<{ code: string; attempts: number }> } }) : null;
    const queuedMail = res.status === 207 && kind === 'email' && body?.notifications?.failed.every((f) => f.code === 'in_progress' && f.attempts === 0);
    if (!body || (res.status === 207 && !queuedMail)) throw new Error(`POST ${number} on :${node.port} answered ${res.status}: ${text}`);
    return { publicId: body.public_id, number, etag: res.headers.get('etag') };
  }

  async function read(node: ServiceProcess, publicId: string): Promise<{ status: number; body: any; etag: string | null }> {
    const res = await fetch(`${node.baseUrl}/api/v1/invoices/${encodeURIComponent(publicId)}`, { headers: { 'x-api-key': team.key } });
    return { status: res.status, body: await res.json(), etag: res.headers.get('etag') };
  }
  return { create, read };
}

/** Runs `work` over `items` on `lanes` concurrent lanes. */
export async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length) {
        const i = next++;
        await work(items[i] as T, i);
      }
    }),
  );
}
