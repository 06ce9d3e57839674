/**
 * What the create and update of a document share: their dependencies, the preparation of a
 * validated document (its seller resolved, its warnings, its totals), the storage bound, and
 * the answer built from the written row.
 */
import type { Transaction } from 'kysely';
import type { Database, InvoiceRow, ShareLinkRow } from '../../../db/types.js';
import { ApiError } from '../../../shared/errors.js';
import type { Clock } from '../../../shared/clock.js';
import type { EdoService, EdoSync } from '../../edo/index.js';
import type { DeliveryReport } from '../../notifications/index.js';
import type { LinkBases } from '../../links/index.js';
import type { AuthContext } from '../../teams/index.js';
import type { WriteEnvelope } from '../rules/envelope.js';
import type { PreparedWrite, RequestInfo } from '../model/document-row.js';
import type { NormalizedInvoice, ValidationIssue, WriteOutcome } from '../model/invoice.model.js';
import { findTooDeepPath } from '../rules/prohibited.js';
import type { ResolvedSeller } from '../rules/seller-resolution.js';
import type { DocumentTotals } from '../rules/totals.js';
import { INVOICE_LIMITS, requisiteWarnings, toApiError, validateInvoice } from '../rules/validation.js';
import type { InvoiceStore } from '../store/index.js';
import { buildInvoiceResponse, etagOf, totalsOf, type ViewContext } from '../view/invoice-view.js';
import { viewContextFor } from '../view/view-context.js';
import type { WriteEffects } from './write-effects.js';

/** A document that passed validation, with its warnings. */
export interface Validated {
  invoice: NormalizedInvoice;
  warnings: ValidationIssue[];
}

/** The seller of a write: the team's organization it names, its requisites filled in. */
export type SellerResolver = (auth: AuthContext, seller: NormalizedInvoice['seller']) => Promise<ResolvedSeller> | ResolvedSeller;

/**
 * Work done inside the document's transaction (the idempotency record). `final`: the answer is
 * already the one the request returns (no e-mail attempt follows the commit).
 */
export type OnCommit = (trx: Transaction<Database>, outcome: WriteOutcome, final: boolean) => Promise<void>;

export interface WriteContext {
  store: InvoiceStore;
  clock: Clock;
  bases: LinkBases;
  effects: WriteEffects;
  edo: Pick<EdoService, 'notifyQueued'>;
  resolveSeller: SellerResolver;
  /** INVOICING_REVISIONS_KEEP: previous revisions kept per document (0: every one). */
  revisionsKeep: number;
}

export function validate(envelope: WriteEnvelope): Validated {
  const result = validateInvoice(envelope.document);
  if (!result.ok) throw toApiError(result);
  return { invoice: result.invoice, warnings: result.warnings };
}

/** The document sits at the root or in `invoice`: the body may nest one level more than a document. */
export function refuseTooDeep(body: unknown): void {
  const path = findTooDeepPath(body, INVOICE_LIMITS.maxDepth + 1);
  if (path === null) return;
  const message = `${path} is nested deeper than ${INVOICE_LIMITS.maxDepth} levels`;
  throw new ApiError('validation_failed', {
    details: `1 field is invalid: ${message}`,
    missing_fields: [],
    errors: [{ field: path, code: 'too_deep', message }],
  });
}

/** The validated document with its seller resolved and filled, its warnings and totals. */
export async function prepareWrite(ctx: Pick<WriteContext, 'resolveSeller'>, auth: AuthContext, envelope: WriteEnvelope, validated: Validated): Promise<PreparedWrite> {
  const { invoice } = validated;
  const resolved = await ctx.resolveSeller(auth, invoice.seller);
  if (envelope.notify && invoice.public_share_enabled === false) {
    throw new ApiError('sending_restricted', {
      details: 'notifications need the share links, but public_share_enabled is false; nothing was saved',
    });
  }
  const filled: NormalizedInvoice = { ...invoice, seller: resolved.seller };
  // Seller warnings describe the requisites as filled in, i.e. as they will be printed; the
  // others do not depend on the seller, so the first validation's stand.
  const others = validated.warnings.filter((w) => !w.field.startsWith('seller.'));
  const warnings = [...others, ...requisiteWarnings(resolved.seller, 'seller')];
  if (invoice.buyer_edo_id !== undefined && !resolved.organization.edo_id) {
    warnings.push({
      field: 'buyer_edo_id',
      code: 'seller_edo_id_missing',
      message: 'the seller organization has no EDO participant id (edo_id), so the document cannot be sent through EDO',
    });
  }
  return { envelope, invoice: filled, resolved, warnings, totals: totalsOf(filled) };
}

/**
 * Tariff `max_storage_mb`: the team's documents and kept revisions (their stored bytes, kept by
 * database triggers, read with the key) plus this document may not pass it. Checked before the
 * write, so writes running at the same moment may together pass it by their own sizes (at most
 * a few documents); nothing is ever saved past it by one write alone.
 */
export async function refuseOverStorage(store: InvoiceStore, auth: Extract<AuthContext, { mode: 'live' }>, document: string): Promise<void> {
  const limit = auth.tariff.max_storage_mb * 1024 * 1024;
  const used = (auth.listState ?? (await store.listState(auth.teamId))).storedBytes;
  const adding = Buffer.byteLength(document);
  if (used + adding <= limit) return;
  throw new ApiError('storage_over_tariff_limit', {
    details: `the team's documents and kept revisions take ${used} bytes; this document (${adding} bytes) would pass the tariff's ${auth.tariff.max_storage_mb} MB; nothing was saved`,
  });
}

/** The answer of a write: the document as written, with its outcomes. */
export function writeOutcome(
  ctx: Pick<WriteContext, 'bases' | 'clock'>,
  auth: AuthContext,
  row: InvoiceRow,
  links: ShareLinkRow[],
  info: RequestInfo,
  report: DeliveryReport,
  edo: EdoSync | null,
  written: { demoGuids?: Record<string, string>; totals?: DocumentTotals } = {},
): WriteOutcome {
  // viewContextFor builds a new object: no copy (a spread copy with properties added afterwards
  // takes V8 11.3's slow path, ~2 µs here).
  const view: ViewContext = viewContextFor(ctx.bases, ctx.clock, auth, info, report.notifications, edo, written.demoGuids);
  if (written.totals) view.totals = written.totals;
  const body = buildInvoiceResponse(row, links, view);
  return { status: report.status, body, etag: etagOf(row.public_id, row.revision), replayed: false };
}
