/**
 * The read caches: the serialized GET detail response, built once per state of the document
 * (GET 4.7×; with the version check, −54 % CPU per hit), list items, list pages under the
 * team's list version (repeated lists 4–10×) and list totals (an uncached 1 % search at 1M
 * documents −40 % CPU), all bounded by bytes (src/shared/byte-cache.ts; docs/performance.md).
 *
 * Building the detail (totals in decimal arithmetic, amount in words, QR payload, portal-token
 * HMACs, links) and serializing it through the deep response schema cost most of a GET's CPU,
 * for a document that has not changed since it was written. This cache keeps, per document,
 * the serialized JSON split around the two per-request strings (`api.request_host`,
 * `api.request_id`), together with everything it was built from.
 *
 * Validation, never time: an entry is used only when every input read from the database for
 * this request equals the one it was built from: every column of the `invoices` row (revision,
 * statuses, viewed/paid times, notification outcome, link epoch, …), every share link, the EDO
 * state, and the request-independent parts of the caller (key id and name, the tariff's
 * external-share right) and the portal links' expiry (a UTC day). A PUT, a status change or a
 * tariff change therefore shows on the very next GET, on this node or any other, since every
 * node reads the same rows. Per-request strings are spliced in verbatim only when they need
 * no JSON escaping; otherwise the caller serializes afresh (same bytes either way).
 */
import { randomBytes } from 'node:crypto';
import type { LRUCache } from 'lru-cache';
import type { InvoiceRow, ShareLinkRow } from '../../../db/types.js';
import { byteBoundedCache, rowBytes, stringBytes, type ByteBudget } from '../../../shared/byte-cache.js';
import type { EdoSync } from '../../edo/index.js';

/** The inputs of one detail response that are not per request. */
export interface DetailInputs {
  row: InvoiceRow;
  links: ShareLinkRow[];
  edo: EdoSync | null;
  keyId: number;
  keyName: string;
  externalShare: boolean;
  /** Portal token expiries (view, edit): change once a day. */
  portalExp: string;
}

/** The inputs of a detail response that come with the request, not from the document's rows. */
export interface DetailCaller {
  keyId: number;
  keyName: string;
  externalShare: boolean;
  portalExp: string;
}

interface Entry {
  inputs: DetailInputs;
  edoJson: string;
  /**
   * The team's change counter (team_document_counts.changes, read before the rows) at which
   * the rows were last read and found equal to `inputs`; null when unknown.
   */
  version: number | null;
  /**
   * The JSON around the request host and id as UTF-8 bytes, quotes included: [before host
   * + `"`, `"` + between + `"`, `"` + after id]. Kept as bytes: a hit
   * copies ~9 KB into the response instead of encoding a ~9 KB string (mostly Cyrillic) to
   * UTF-8 and measuring it on every request.
   */
  parts: [Buffer, Buffer, Buffer];
}

/** Strings fast-json-stringify and JSON.stringify both write as `"` + s + `"`. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function sameLinks(a: ShareLinkRow[], b: ShareLinkRow[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as ShareLinkRow;
    const y = b[i] as ShareLinkRow;
    if (
      x.token !== y.token ||
      x.kind !== y.kind ||
      x.email !== y.email ||
      x.name !== y.name ||
      x.position !== y.position ||
      x.sort_order !== y.sort_order
    ) {
      return false;
    }
  }
  return true;
}

function sameRow(a: InvoiceRow, b: InvoiceRow): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) {
    if ((a as unknown as Record<string, unknown>)[k] !== (b as unknown as Record<string, unknown>)[k]) return false;
  }
  return true;
}

/** The response's bytes: the parts with the host and id (PLAIN: ASCII, written as is) between them. */
function compose(parts: [Buffer, Buffer, Buffer], host: string, requestId: string): Buffer {
  const [a, b, c] = parts;
  const out = Buffer.allocUnsafe(a.length + host.length + b.length + requestId.length + c.length);
  let at = a.copy(out, 0);
  at += out.write(host, at, 'latin1');
  at += b.copy(out, at);
  at += out.write(requestId, at, 'latin1');
  c.copy(out, at);
  return out;
}

/** What an entry holds in memory: its bytes, the rows it was built from and its EDO state. */
function entryBytes(entry: Entry): number {
  let bytes = entry.parts[0].length + entry.parts[1].length + entry.parts[2].length + rowBytes(entry.inputs.row) + stringBytes(entry.edoJson);
  for (const link of entry.inputs.links) bytes += rowBytes(link);
  return bytes;
}

export class DetailCache {
  /** Bounded by bytes (INVOICING_READ_CACHE_MB); a response above INVOICING_CACHE_ENTRY_MAX_KB is not kept. */
  private readonly entries: LRUCache<string, Entry> | null;
  /** Random per process, so no document can contain them. */
  readonly hostMark = `h${randomBytes(16).toString('hex')}`;
  readonly idMark = `r${randomBytes(16).toString('hex')}`;
  hits = 0;
  misses = 0;
  /** Hits served by the team's change counter alone, without reading the document (part of `hits`). */
  versionHits = 0;

  constructor(budget: ByteBudget) {
    this.entries = byteBoundedCache(budget, entryBytes);
  }

  get enabled(): boolean {
    return this.entries !== null;
  }

  /**
   * The cached bytes (and the row they were built from, for the ETag) when the team's change
   * counter, read in this request before anything else of the document, is the one at which
   * the entry's rows were last read and found unchanged; null otherwise (the caller then reads
   * the rows and validates with `lookup`). Every write to the team's documents and share links
   * moves the counter in its transaction (database triggers, migrations 2026-11-26T1400 and
   * 2026-11-26T1540), so an equal counter means the row and links are still those. The EDO
   * state lives in other tables (its outbox moves without touching the document), so an entry
   * with an EDO state is always validated by reading it. Never timed.
   */
  lookupByVersion(teamId: string, publicId: string, version: number, caller: DetailCaller, host: string, requestId: string): { json: Buffer; row: InvoiceRow } | null {
    if (!this.splices(host, requestId)) return null;
    const entry = this.entries?.get(`${teamId}\u0000${publicId}`);
    if (
      entry === undefined ||
      entry.version !== version ||
      entry.inputs.edo !== null ||
      entry.inputs.keyId !== caller.keyId ||
      entry.inputs.keyName !== caller.keyName ||
      entry.inputs.externalShare !== caller.externalShare ||
      entry.inputs.portalExp !== caller.portalExp
    ) {
      return null;
    }
    this.hits++;
    this.versionHits++;
    return { json: compose(entry.parts, host, requestId), row: entry.inputs.row };
  }

  /** Whether the request's host and id can be spliced in verbatim (no JSON escaping needed). */
  splices(host: string, requestId: string): boolean {
    return this.enabled && PLAIN.test(host) && PLAIN.test(requestId);
  }

  /** The cached JSON's UTF-8 bytes for these inputs with the request's host and id, or null (not cached, or any input changed). */
  lookup(inputs: DetailInputs, host: string, requestId: string, version: number | null = null): Buffer | null {
    if (!this.splices(host, requestId)) return null;
    const entry = this.entries?.get(`${inputs.row.team_id}\u0000${inputs.row.public_id}`);
    if (
      entry === undefined ||
      entry.inputs.keyId !== inputs.keyId ||
      entry.inputs.keyName !== inputs.keyName ||
      entry.inputs.externalShare !== inputs.externalShare ||
      entry.inputs.portalExp !== inputs.portalExp ||
      !sameRow(entry.inputs.row, inputs.row) ||
      !sameLinks(entry.inputs.links, inputs.links) ||
      entry.edoJson !== JSON.stringify(inputs.edo)
    ) {
      this.misses++;
      return null;
    }
    this.hits++;
    // The rows read after `version` are the entry's: valid at that counter.
    entry.version = version;
    return compose(entry.parts, host, requestId);
  }

  /**
   * Keeps `json`, the response serialized with `hostMark` and `idMark` as the request host and
   * id, and returns it with the request's own, as UTF-8 bytes. Null when the marks are not
   * found once each in order (nothing is kept; the caller serializes with the real values).
   */
  store(inputs: DetailInputs, json: string, host: string, requestId: string, version: number | null = null): Buffer | null {
    const hostMark = `"${this.hostMark}"`;
    const idMark = `"${this.idMark}"`;
    const h = json.indexOf(hostMark);
    const i = json.indexOf(idMark);
    if (h < 0 || i < h || json.indexOf(hostMark, h + 1) >= 0 || json.indexOf(idMark, i + 1) >= 0) return null;
    const parts: [Buffer, Buffer, Buffer] = [
      Buffer.from(`${json.slice(0, h)}"`),
      Buffer.from(`"${json.slice(h + hostMark.length, i)}"`),
      Buffer.from(`"${json.slice(i + idMark.length)}`),
    ];
    this.entries?.set(`${inputs.row.team_id}\u0000${inputs.row.public_id}`, { inputs, edoJson: JSON.stringify(inputs.edo), version, parts });
    return compose(parts, host, requestId);
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }

  /** Bytes held now, as counted against the budget. */
  get sizeBytes(): number {
    return this.entries?.calculatedSize ?? 0;
  }
}

/**
 * Serialized list items, one per document, validated like the detail: an item is reused only
 * when every column the list read for it (and its buyer share token) and the tariff's
 * external-share right equal those it was serialized from. Bounded by bytes. A page is built
 * when its version moved (any write of the team): its unchanged items are reused, building a
 * page −28 % CPU (3.30 → 1.75 ms, A/B in docs/performance.md).
 */
export class ListItemCache {
  /** Each item's JSON as UTF-8 bytes: a page is put together from them without encoding text again. */
  private readonly entries: LRUCache<string, { row: Record<string, unknown>; externalShare: boolean; json: Buffer }> | null;
  hits = 0;
  misses = 0;

  constructor(budget: ByteBudget) {
    this.entries = byteBoundedCache(budget, (entry) => entry.json.length + rowBytes(entry.row));
  }

  get enabled(): boolean {
    return this.entries !== null;
  }

  get(teamId: string, row: Record<string, unknown>, externalShare: boolean): Buffer | null {
    const entry = this.entries?.get(`${teamId}\u0000${String(row.public_id)}`);
    if (entry === undefined || entry.externalShare !== externalShare || !sameRow(entry.row as never, row as never)) {
      this.misses++;
      return null;
    }
    this.hits++;
    return entry.json;
  }

  set(teamId: string, row: Record<string, unknown>, externalShare: boolean, json: Buffer): void {
    this.entries?.set(`${teamId}\u0000${String(row.public_id)}`, { row, externalShare, json });
  }

  /** Bytes held now, as counted against the budget. */
  get sizeBytes(): number {
    return this.entries?.calculatedSize ?? 0;
  }
}

/**
 * Whole list pages as sent, validated by the team's list version: the sum of its change
 * counter, which every write to the team's documents or to their share links moves in the
 * writing transaction (database triggers, migration 2026-11-26T1400_list_versions). The key is
 * everything the page's bytes depend on besides the rows: the team, the tariff's external-share
 * right (items' service status), and the normalized query. The response has no per-request
 * field. The version is read before the page (see teamListState), so an entry is never
 * newer-versioned than its data; a request uses an entry only when the version it read equals
 * the entry's, on this node, whatever other nodes wrote. Never timed.
 *
 * Bounded by bytes (a page of 50 items is ~30 KB of UTF-8, 200 items ~120 KB). Pages are kept
 * as UTF-8 bytes: a hit is sent without encoding 30 KB of text again.
 */
export class ListPageCache {
  private readonly entries: LRUCache<string, { version: number; body: Buffer }> | null;
  hits = 0;
  misses = 0;

  constructor(budget: ByteBudget) {
    this.entries = byteBoundedCache(budget, (entry) => entry.body.length);
  }

  get enabled(): boolean {
    return this.entries !== null;
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }

  get sizeBytes(): number {
    return this.entries?.calculatedSize ?? 0;
  }

  /** The page's UTF-8 bytes when kept at this version (sent as they are: no re-encoding per request). */
  get(key: string, version: number): Buffer | null {
    const entry = this.entries?.get(key);
    if (entry === undefined || entry.version !== version) {
      this.misses++;
      return null;
    }
    this.hits++;
    return entry.body;
  }

  set(key: string, version: number, body: Buffer): void {
    this.entries?.set(key, { version, body });
  }
}

/**
 * The exact `total` of a list's filters (without `limit`/`offset`), validated like the pages by
 * the team's list version: paging through one search or date range counts its matches once
 * per version, not once per page. Bounded by bytes (an entry is its key and a number).
 */
export class ListTotalCache {
  private readonly entries: LRUCache<string, { version: number; total: number }> | null;

  constructor(budget: ByteBudget) {
    this.entries = byteBoundedCache(budget, () => 32);
  }

  get(key: string, version: number): number | undefined {
    const entry = this.entries?.get(key);
    if (entry === undefined || entry.version !== version) return undefined;
    return entry.total;
  }

  set(key: string, version: number, total: number): void {
    this.entries?.set(key, { version, total });
  }
}
