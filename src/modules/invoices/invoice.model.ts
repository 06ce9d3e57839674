/**
 * The shapes the write path, the idempotency store and the read side share: the validated
 * document and a write's outcome. Types only, so every file of the module can import them
 * without importing the service.
 */
import type { Currency } from '../../shared/reference.js';
import type { InvoiceWriteResponse } from './invoice.schemas.js';
import type { SellerStatus } from './statuses.js';

export interface ValidationIssue {
  /** Path of the field: `items[2].price`, `seller.inn`, `api_recipients[0].email`. */
  field: string;
  /** Machine-readable reason, e.g. `required`, `invalid_type`, `out_of_range`, `inn_checksum`. */
  code: string;
  /** Human-readable reason, naming the path. */
  message: string;
}

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

export interface ApiRecipient {
  /** Not checked for syntax: a malformed address is reported by the e-mail step as `invalid_address`. */
  email?: string;
  name?: string;
  position?: string;
  [key: string]: unknown;
}

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
