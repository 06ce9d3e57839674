/** The reference catalog of the caller's team (spec 2.5), or the sample catalog in demo mode. */
import type { LRUCache } from 'lru-cache';
import type { Db } from '../../db/database.js';
import { byteBoundedCache, stringBytes, type ByteBudget } from '../../shared/byte-cache.js';
import { labelled, BUYER_STATUSES, SELLER_STATUSES, SERVICE_STATUSES } from '../invoices/index.js';
import { DEMO_CATALOG_DATA, loadCatalogData, organizationsWithinLimit, type AuthContext, type CatalogData } from '../teams/index.js';
import { CURRENCIES, INVOICE_DIRECTIONS, UNITS, VAT_RATES } from '../../shared/reference.js';
import type { CatalogResponse } from './catalog.schemas.js';

export const CATALOG_ENUMS: CatalogResponse['enums'] = {
  currencies: Object.entries(CURRENCIES).map(([code, name]) => ({ code, name })),
  invoice_directions: labelled(INVOICE_DIRECTIONS),
  vat_rates: VAT_RATES,
  seller_statuses: labelled(SELLER_STATUSES),
  buyer_statuses: labelled(BUYER_STATUSES),
  service_statuses: labelled(SERVICE_STATUSES),
  units: UNITS,
};

export function toCatalogResponse(data: CatalogData, maxOrganizations: number, demo: boolean): CatalogResponse {
  const within = organizationsWithinLimit(data.organizations, maxOrganizations);
  return {
    ok: true,
    ...(demo ? { demo_mode: true } : {}),
    organizations: data.organizations.map((o) => ({
      id: o.id,
      name: o.name,
      inn: o.inn,
      kpp: o.kpp,
      email: o.email,
      address: o.address,
      edo_id: o.edo_id,
      active: o.active === 1,
      within_tariff_limit: within.has(o.id),
    })),
    bank_accounts: data.bankAccounts.map((b) => ({
      id: b.id,
      organization_id: b.organization_id,
      bank_name: b.bank_name,
      bik: b.bik,
      account: b.account,
      corr_account: b.corr_account,
      is_default: b.is_default === 1,
    })),
    managers: data.managers.map((m) => ({ id: m.id, name: m.name, email: m.email, phone: m.phone })),
    signers: data.signers.map((s) => ({
      id: s.id,
      organization_id: s.organization_id,
      name: s.name,
      position: s.position,
      role: s.role,
    })),
    enums: CATALOG_ENUMS,
  };
}

/** Default budget of the serialized catalogs a node keeps (validated on every read, see getCatalogJson). */
const DEFAULT_BUDGET: ByteBudget = { maxBytes: 4 * 1024 * 1024, maxEntryBytes: 256 * 1024 };

export class CatalogService {
  /** Per team, bounded by bytes (a share of INVOICING_REFERENCE_CACHE_MB). */
  private readonly serialized: LRUCache<string, { version: string; json: Buffer }> | null;
  private hits = 0;
  private misses = 0;

  constructor(
    private readonly db: Db,
    budget: ByteBudget = DEFAULT_BUDGET,
  ) {
    this.serialized = byteBoundedCache(budget, (entry) => entry.json.length + stringBytes(entry.version));
  }

  /** The serialized catalogs served from this node's cache and built afresh (tests, diagnostics). */
  cacheStats(): { hits: number; misses: number; size: number } {
    return { hits: this.hits, misses: this.misses, size: this.serialized?.size ?? 0 };
  }

  /**
   * The catalog as JSON (its UTF-8 bytes when from the cache: sent as they are, not encoded
   * again per request), `serialize` being the route's response serializer. The text is
   * kept per team under the version it was built from: the team's `catalog_version` (moved on
   * by triggers in every transaction that writes the team's organizations, bank accounts,
   * managers or signers) and the tariff's organization limit, both read from the database in
   * this request with the team row (authentication reads it anyway). Equal version: the text
   * is served with no query at all; any change shows on the very next request, on every node.
   */
  async getCatalogJson(auth: AuthContext, serialize: (body: CatalogResponse) => string): Promise<string | Buffer> {
    if (auth.mode === 'demo') return serialize(await this.getCatalog(auth));
    const version = `${auth.team.catalog_version}\u0000${auth.tariff.max_organizations}\u0000${auth.team.created_at}`;
    const hit = this.serialized?.get(auth.teamId);
    if (hit !== undefined && hit.version === version) {
      this.hits += 1;
      return hit.json;
    }
    this.misses += 1;
    // Read after the version: the rows are at least as new as it, so the text is never older
    // than the version it is kept under.
    const data = await loadCatalogData(this.db, auth.teamId);
    const json = Buffer.from(serialize(toCatalogResponse(data, auth.tariff.max_organizations, false)));
    this.serialized?.set(auth.teamId, { version, json });
    return json;
  }

  async getCatalog(auth: AuthContext): Promise<CatalogResponse> {
    if (auth.mode === 'demo') return toCatalogResponse(DEMO_CATALOG_DATA, auth.tariff.max_organizations, true);
    return toCatalogResponse(await loadCatalogData(this.db, auth.teamId), auth.tariff.max_organizations, false);
  }
}
