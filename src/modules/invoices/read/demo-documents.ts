/** The demo token's world: its sample document, fixed links and dry-run writes. */
import type { InvoiceRow as Row, ShareLinkRow } from '../../../db/types.js';
import { ApiError } from '../../../shared/errors.js';
import { type LinkBases } from '../../links/index.js';
import { DEMO_CATALOG_DATA, DEMO_TEAM_ID, type AuthContext } from '../../teams/index.js';
import { DEMO_CREATED_AT, DEMO_SAMPLE_PAYLOAD, DEMO_SHARE_TOKENS } from './demo-data.js';
import type { InvoiceList } from '../invoice-requests.schemas.js';
import type { InvoiceDetail } from '../invoice.schemas.js';
import { emptyOutcome } from '../../notifications/index.js';
import { buildInvoiceResponse, etagOf, totalsOf } from '../view/invoice-view.js';
import { resolveSellerFrom, type ResolvedSeller } from '../rules/seller-resolution.js';
import { uniqueRecipients } from '../model/share-links.js';
import type { ApiRecipient, Party } from '../model/invoice.model.js';
import type { RequestInfo, WriteValues } from '../model/document-row.js';
import { validateInvoice } from '../rules/validation.js';
import { normalizeSearchText } from '../rules/search-text.js';

import { buildListItem } from './list-items.js';

type DemoAuth = Extract<AuthContext, { mode: 'demo' }>;

/** The demo token's world: a sample document, fixed links, dry-run writes. */
export class DemoDocuments {
  constructor(
    private readonly bases: LinkBases,
    private readonly demoPublicId: string,
  ) {}

  notFound(publicId: string): ApiError {
    return new ApiError('document_not_found', {
      details: `demo mode knows only the sample document ${this.demoPublicId}`,
      document_public_id: publicId,
      document_kind: 'invoice',
      demo_public_id: this.demoPublicId,
    });
  }

  resolveSeller(seller: Party & { inn: string }, maxOrganizations: number): ResolvedSeller {
    return resolveSellerFrom(seller, DEMO_CATALOG_DATA.organizations, DEMO_CATALOG_DATA.bankAccounts, maxOrganizations);
  }

  /** Links of a dry-run document: fixed demo tokens, never stored. */
  links(publicId: string, recipients: readonly ApiRecipient[], now: string): ShareLinkRow[] {
    const base = { team_id: DEMO_TEAM_ID, public_id: publicId, created_at: now, last_opened_at: null };
    return [
      { ...base, token: DEMO_SHARE_TOKENS.buyer, kind: 'buyer', email: null, name: null, position: null, sort_order: 0 },
      { ...base, token: DEMO_SHARE_TOKENS.colleague, kind: 'colleague', email: null, name: null, position: null, sort_order: 1 },
      ...uniqueRecipients(recipients).map((r, i) => ({
        ...base,
        token: `demo-recipient-${i + 1}`,
        kind: 'recipient' as const,
        email: r.email,
        name: r.name,
        position: r.position,
        sort_order: i + 2,
      })),
    ];
  }

  dryRunRow(
    values: WriteValues,
    publicId: string,
    now: string,
    recipients: readonly ApiRecipient[],
  ): { row: Row; links: ShareLinkRow[] } {
    const row: Row = {
      created_by_login: values.last_modified_by_login ?? null,
      api_created_at: now,
      api_updated_at: null,
      notifications: null,
      viewed_at: null,
      payment_reported_at: null,
      link_epoch: 0,
      ...values,
      team_id: DEMO_TEAM_ID,
      public_id: publicId,
      revision: 1,
      package_public_id: `demo-package-${publicId}`.slice(0, 64),
      buyer_status: 'not_sent',
      created_at: now,
    } as Row;
    return { row, links: this.links(publicId, recipients, now) };
  }

  /** The built-in sample document, stored nowhere. */
  sampleRow(): { row: Row; links: ShareLinkRow[] } {
    const result = validateInvoice({ ...DEMO_SAMPLE_PAYLOAD, public_id: this.demoPublicId } as unknown as Record<string, unknown>);
    if (!result.ok) throw new Error(`the demo sample is invalid: ${result.details}`);
    const resolved = this.resolveSeller(result.invoice.seller, 1);
    const invoice = { ...result.invoice, seller: resolved.seller, seller_status: 'issued' };
    const totals = totalsOf(invoice);
    const row: Row = {
      team_id: DEMO_TEAM_ID,
      public_id: this.demoPublicId,
      revision: 1,
      link_epoch: 0,
      package_public_id: `demo-package-${this.demoPublicId}`.slice(0, 64),
      number: invoice.number,
      date: invoice.date,
      currency: invoice.currency,
      direction: invoice.invoice_direction,
      seller_org_id: resolved.organization.id,
      seller_inn: resolved.seller.inn,
      seller_name: String(resolved.seller.name),
      buyer_inn: invoice.buyer.inn ?? null,
      buyer_name: invoice.buyer.name,
      search_text: normalizeSearchText(invoice.number, String(resolved.seller.name), resolved.seller.inn, invoice.buyer.name, invoice.buyer.inn),
      seller_status: 'issued',
      buyer_status: 'not_sent',
      service_status: 'active',
      service_status_reason: '',
      editor_mode: 'api',
      source_type: 'api',
      subtotal: totals.subtotal,
      vat_total: totals.vat_total,
      total: totals.total,
      public_share_enabled: 1,
      information_system: 'demo',
      seller_edo_id: resolved.organization.edo_id,
      buyer_edo_id: null,
      document: JSON.stringify(invoice),
      validation: JSON.stringify({ valid: true, errors: [], warnings: result.warnings }),
      notifications: null,
      created_at: DEMO_CREATED_AT,
      last_modified_at: DEMO_CREATED_AT,
      created_by_login: 'demo',
      last_modified_by_login: 'demo',
      api_key_id: 0,
      api_key_name: 'demo',
      api_request_host: null,
      api_created_at: DEMO_CREATED_AT,
      api_updated_at: null,
      viewed_at: null,
      payment_reported_at: null,
      changed_at: null,
      edo_pending_job: null,
      email_pending: null,
      traceparent: null,
    };
    return { row, links: this.links(this.demoPublicId, result.invoice.api_recipients, DEMO_CREATED_AT) };
  }

  get(auth: DemoAuth, publicId: string, info: RequestInfo, now: Date): { body: InvoiceDetail; etag: string } {
    if (publicId !== this.demoPublicId) throw this.notFound(publicId);
    const { row, links } = this.sampleRow();
    const body = buildInvoiceResponse(row, links, {
      bases: this.bases,
      now,
      edo: null,
      tariff: auth.tariff,
      caller: { keyId: auth.keyId, keyName: auth.keyName },
      request: info,
      notifications: emptyOutcome(row.public_id, false),
      demo: { guids: this.guids() },
    });
    return { body, etag: etagOf(row.public_id, row.revision) };
  }

  list(auth: DemoAuth, _info: RequestInfo, _now: Date, page: { limit: number; offset: number }): InvoiceList {
    const { row } = this.sampleRow();
    const item = buildListItem({ ...row, buyer_token: DEMO_SHARE_TOKENS.buyer }, this.bases, auth.tariff);
    return {
      ok: true,
      total: 1,
      limit: page.limit,
      offset: page.offset,
      items: page.offset === 0 ? [item] : [],
      demo_mode: true,
      demo_guids: this.guids(),
    };
  }

  guids(): Record<string, string> {
    return { public_id: this.demoPublicId, package_public_id: `demo-package-${this.demoPublicId}`.slice(0, 64) };
  }
}
