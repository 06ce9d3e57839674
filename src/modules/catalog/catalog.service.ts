/** The reference catalog of the caller's team (spec 2.5), or the sample catalog in demo mode. */
import type { Db } from '../../db/database.js';
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

/** Teams whose serialized catalog a node keeps (validated on every read, see getCatalogJson). */
const CATALOG_CACHE_MAX = 1000;

export class CatalogService {
  private readonly serialized = new Map<string, { inputs: string; json: string }>();

  constructor(private readonly db: Db) {}

  /**
   * The catalog as JSON text, `serialize` being the route's response serializer. The team's
   * reference rows are read on every request; the serialized text is reused while they and the
   * tariff's organization limit are exactly what it was built from (compared, not timed), so a
   * change shows on the very next request, on every node.
   */
  async getCatalogJson(auth: AuthContext, serialize: (body: CatalogResponse) => string): Promise<string> {
    if (auth.mode === 'demo') return serialize(await this.getCatalog(auth));
    const data = await loadCatalogData(this.db, auth.teamId);
    const inputs = `${auth.tariff.max_organizations}\u0000${JSON.stringify(data)}`;
    const hit = this.serialized.get(auth.teamId);
    if (hit !== undefined && hit.inputs === inputs) return hit.json;
    const json = serialize(toCatalogResponse(data, auth.tariff.max_organizations, false));
    this.serialized.delete(auth.teamId);
    this.serialized.set(auth.teamId, { inputs, json });
    if (this.serialized.size > CATALOG_CACHE_MAX) this.serialized.delete(this.serialized.keys().next().value as string);
    return json;
  }

  async getCatalog(auth: AuthContext): Promise<CatalogResponse> {
    if (auth.mode === 'demo') return toCatalogResponse(DEMO_CATALOG_DATA, auth.tariff.max_organizations, true);
    return toCatalogResponse(await loadCatalogData(this.db, auth.teamId), auth.tariff.max_organizations, false);
  }
}
