/**
 * The shapes the write path, the idempotency store and the read side share: the validated
 * document and a write's outcome. Types only, so every file of the module can import them
 * without importing the service.
 */
import type { Currency } from '../../../shared/reference.js';
import type { ApiRecipientInput } from '../invoice-requests.schemas.js';
import type { InvoiceWriteResponse, ValidationIssue } from '../invoice.schemas.js';

export type { ValidationIssue };
import type { SellerStatus } from '../rules/statuses.js';

export interface Party {
  name?: string;
  inn?: string;
  kpp?: string;
  email?: string;
  address?: string;
  bank_name?: string;
  bik?: string;
  account?: string;
  corr_account?: string;
  [key: string]: unknown;
}

export interface NormalizedItem {
  name: string;
  qty: number;
  price: number;
  /** Default `шт`. */
  unit: string;
  /** null is "без НДС" (not the same as 0 %). */
  vat_pct: number | null;
  [key: string]: unknown;
}

/**
 * An API recipient as the document gives it (the request schema's `ApiRecipientInput`). The
 * address is not checked for syntax here: a malformed one is reported by the e-mail step as
 * `invalid_address`. Unknown properties are kept.
 */
export type ApiRecipient = Partial<ApiRecipientInput> & { [key: string]: unknown };

export type InvoiceDirection = 'incoming' | 'outgoing';

/** The document as stored: defaults applied, requisites trimmed, unknown properties kept. */
export interface NormalizedInvoice {
  public_id?: string;
  number: string;
  /** `YYYY-MM-DD`. */
  date: string;
  currency: Currency;
  invoice_direction: InvoiceDirection;
  seller: Party & { inn: string };
  buyer: Party & { name: string };
  items: NormalizedItem[];
  prices_include_vat: boolean;
  public_share_enabled: boolean;
  show_payment_qr: boolean;
  /** Absent: the service decides (create defaults to `issued`, update keeps the current one). */
  seller_status?: SellerStatus;
  due_date?: string;
  information_system?: string;
  buyer_edo_id?: string;
  comment?: string;
  purpose?: string;
  api_recipients: ApiRecipient[];
  manager?: Record<string, unknown>;
  buyer_contact?: Record<string, unknown>;
  signers?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

export interface WriteOutcome {
  status: 200 | 207;
  body: InvoiceWriteResponse;
  etag: string;
  replayed: boolean;
}
