/**
 * Request shapes of the documents API: the write envelope and document (spec 2.1, 2.2),
 * path, query and headers, the list response (2.6) and revisions. The write body is
 * described here for the OpenAPI document; its rules (every missing path at once, warnings,
 * prohibited fields) are checked by validation.ts, which reports them in the spec's shape.
 */
import { Type, type Static } from '@sinclair/typebox';
import { CURRENCY_CODES } from '../../shared/reference.js';
import { ref } from '../../shared/schemas.js';
import { InvoiceStatus } from './invoice.schemas.js';
import { FIELD_MAX_LENGTH, INVOICE_LIMITS as L } from './rules/limits.js';

/** A member of the free-form objects (manager, buyer_contact, signers): bounded as bounds.ts checks it. */
const contactFields = {
  name: Type.Optional(Type.String({ maxLength: FIELD_MAX_LENGTH.name, description: 'Full name.' })),
  position: Type.Optional(Type.String({ maxLength: FIELD_MAX_LENGTH.position, description: 'Position.' })),
  phone: Type.Optional(Type.String({ maxLength: FIELD_MAX_LENGTH.phone, description: 'Phone.' })),
  email: Type.Optional(Type.String({ maxLength: FIELD_MAX_LENGTH.email, description: 'E-mail.' })),
};
const EXTRA_NOTE = `Additional properties are kept, bounded like every part of the document: strings ${L.anyStringMaxLength} characters, names ${L.keyMaxLength}, arrays ${L.anyArrayMaxItems} entries, objects ${L.objectMaxProperties} properties, nesting ${L.maxDepth} levels (400 validation_failed).`;
const REQUISITE = { maxLength: L.requisiteMaxLength };

const S = (description: string, extra: object = {}) => Type.String({ description, ...extra });

/** A notification recipient in a write request; unknown properties are kept. */
export const ApiRecipientInput = Type.Object(
  {
    email: S('Address.', { maxLength: L.emailMaxLength }),
    name: Type.Optional(S('Name.', { maxLength: L.recipientFieldMaxLength })),
    position: Type.Optional(S('Position.', { maxLength: L.recipientFieldMaxLength })),
  },
  { additionalProperties: true, maxProperties: L.objectMaxProperties },
);
export type ApiRecipientInput = Static<typeof ApiRecipientInput>;

const partyFields = {
  name: Type.Optional(S('Name.', { maxLength: 500 })),
  inn: Type.Optional(S('INN, 10 or 12 digits (a wrong checksum is a warning, not a refusal).', REQUISITE)),
  kpp: Type.Optional(S('KPP, 9 characters.', REQUISITE)),
  email: Type.Optional(S('E-mail.', { maxLength: L.emailMaxLength })),
  address: Type.Optional(S('Address.', { maxLength: 1000 })),
};

export const SellerParty = Type.Object(
  {
    ...partyFields,
    inn: S('INN. Required: it must match an active organization of the team (403 seller_org_not_allowed).', REQUISITE),
    name: Type.Optional(S('Name; filled from the organization when omitted.', { maxLength: 500 })),
    bank_name: Type.Optional(S('Bank name. The bank set is filled from the organization’s default account when omitted.', { maxLength: L.bankNameMaxLength })),
    bik: Type.Optional(S('BIK, 9 digits.', REQUISITE)),
    account: Type.Optional(S('Settlement account, 20 digits (its control key is checked against the BIK).', REQUISITE)),
    corr_account: Type.Optional(S('Correspondent account, 20 digits.', REQUISITE)),
  },
  {
    additionalProperties: true,
    maxProperties: L.objectMaxProperties,
    description: `The seller. Omitted kpp, address and bank requisites come from the organization. ${EXTRA_NOTE}`,
  },
);

export const BuyerParty = Type.Object(
  {
    ...partyFields,
    name: S('Name. Required.', { maxLength: 500 }),
    email: Type.Optional(S('E-mail: the default notification recipient.', { maxLength: L.emailMaxLength })),
  },
  { additionalProperties: true, maxProperties: L.objectMaxProperties, description: `The buyer. ${EXTRA_NOTE}` },
);

export const InvoiceItem = Type.Object(
  {
    name: S('Name of the goods or service. Required.', { maxLength: 1000 }),
    qty: Type.Number({ exclusiveMinimum: 0, maximum: 1e9, description: 'Quantity, > 0, up to 6 decimals. Required.' }),
    unit: Type.Optional(S('Unit of measure; default `шт`.', { maxLength: 32 })),
    price: Type.Number({ minimum: 0, maximum: 1e12, description: 'Price per unit, ≥ 0, up to 4 decimals. Required.' }),
    vat_pct: Type.Optional(
      Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], {
        description: 'VAT rate 0–100 (22, 20, 10, 7, 5, 0 are the Russian rates; others give a warning). Absent or null: без НДС.',
      }),
    ),
  },
  {
    additionalProperties: true,
    maxProperties: L.objectMaxProperties,
    description: `A line of the document. The computed amounts (line, line_no, amount, net, vat, gross) are the service's: sent here they are dropped with a service_owned_field warning. ${EXTRA_NOTE}`,
  },
);

export const InvoicePayload = Type.Object(
  {
    public_id: Type.Optional(
      S('Client-supplied id, `^[A-Za-z0-9_-]{8,64}$`; generated when absent (31 characters: the creation time in 9 base-36 digits, then 128 random bits). Taken by any document: 409 public_id_conflict.', {
        pattern: '^[A-Za-z0-9_-]{8,64}$',
        maxLength: 64,
      }),
    ),
    number: S('Invoice number. Required.', { maxLength: 64 }),
    date: S('Invoice date, a real calendar date. Required.', { format: 'date' }),
    currency: Type.Union(
      CURRENCY_CODES.map((c) => Type.Literal(c)),
      { description: 'Currency. Required.' },
    ),
    invoice_direction: Type.Optional(Type.Union([Type.Literal('incoming'), Type.Literal('outgoing')], { description: 'Default outgoing.' })),
    seller: SellerParty,
    buyer: BuyerParty,
    items: Type.Array(InvoiceItem, { minItems: 1, maxItems: 1000, description: '1 to 1000 lines.' }),
    prices_include_vat: Type.Optional(Type.Boolean({ description: 'True: prices include VAT (extracted). Default false: VAT on top.' })),
    seller_status: Type.Optional(
      Type.Union(['draft', 'issued', 'paid', 'cancelled'].map((s) => Type.Literal(s)), {
        description: 'Seller status; create defaults to issued. Allowed moves: draft→issued, issued→paid, draft|issued→cancelled.',
      }),
    ),
    public_share_enabled: Type.Optional(Type.Boolean({ description: 'Default true; false turns the share links off.' })),
    show_payment_qr: Type.Optional(Type.Boolean({ description: 'Default true.' })),
    information_system: Type.Optional(S('Name of the calling system, kept in metadata.', { maxLength: L.informationSystemMaxLength })),
    buyer_edo_id: Type.Optional(S('EDO participant id of the buyer; starts EDO synchronization.', { maxLength: L.buyerEdoIdMaxLength })),
    due_date: Type.Optional(S('Payment due date.', { format: 'date', maxLength: 10 })),
    purpose: Type.Optional(S('Payment purpose.', { maxLength: L.textMaxLength })),
    comment: Type.Optional(S('Comment shown on the document.', { maxLength: L.textMaxLength })),
    basis: Type.Optional(S('Basis (contract, order) shown on the document.', { maxLength: FIELD_MAX_LENGTH.basis })),
    document_title: Type.Optional(S('Custom title instead of "Счёт № N от DD.MM.YYYY".', { maxLength: FIELD_MAX_LENGTH.document_title })),
    api_recipients: Type.Optional(
      Type.Array(ApiRecipientInput, {
        maxItems: L.recipientsMax,
        description: `Notification recipients, each with an own share link; at most ${L.recipientsMax}.`,
      }),
    ),
    manager: Type.Optional(
      Type.Object(contactFields, { additionalProperties: true, maxProperties: L.objectMaxProperties, description: `Manager shown on the document. ${EXTRA_NOTE}` }),
    ),
    buyer_contact: Type.Optional(
      Type.Object(contactFields, { additionalProperties: true, maxProperties: L.objectMaxProperties, description: `Buyer contact person. ${EXTRA_NOTE}` }),
    ),
    signers: Type.Optional(
      Type.Array(Type.Object(contactFields, { additionalProperties: true, maxProperties: L.objectMaxProperties }), {
        maxItems: L.signersMax,
        description: `Signers, at most ${L.signersMax}. ${EXTRA_NOTE}`,
      }),
    ),
  },
  {
    $id: 'InvoicePayload',
    additionalProperties: true,
    maxProperties: L.objectMaxProperties,
    description:
      'The document. Additional properties are kept, each bounded (strings 2000 characters, property names 200, arrays 1000 entries, objects 200 properties, nesting 32 levels: 400 validation_failed). Service-owned fields (buyer_status, revision, team_id, status, totals, total, metadata, ...) are dropped with a `service_owned_field` warning each. Prohibited (400 prohibited_field, the first 100 paths in `errors` and `details`, `errors_not_listed` counting the rest): seller_logo_url, seller_stamp_url, payment_qr_url, signers[].facsimile_url, manager.contact_qr_url, buyer_contact.contact_qr_url, any property ending in _url, _uri or _link, any string that is a whole http(s):// or data: URL, and base64 image data.',
  },
);

const envelopeFields = {
  actor_login: Type.Optional(S('Login of the person acting; recorded as the modifying login.', { maxLength: 200 })),
  notify_recipients: Type.Optional(Type.Boolean({ description: 'Send the document by e-mail to the recipients.' })),
  send_notifications: Type.Optional(Type.Boolean({ description: 'Same as notify_recipients.' })),
  partial_update: Type.Optional(Type.Boolean({ description: 'Unsupported: any request with it gets 400 partial_update_not_supported.' })),
  patch: Type.Optional(Type.Boolean({ description: 'Unsupported: any request with it gets 400 partial_update_not_supported.' })),
};

export const CreateInvoiceBody = Type.Union(
  [
    Type.Object({ invoice: ref(InvoicePayload), ...envelopeFields }, { additionalProperties: true, title: 'Envelope' }),
    Type.Intersect([ref(InvoicePayload), Type.Object(envelopeFields)], { title: 'Document at the root' }),
  ],
  { description: 'The document in `invoice`, or the document itself at the root (with the envelope fields beside it).' },
);

export const UpdateInvoiceBody = Type.Object(
  { invoice: ref(InvoicePayload), ...envelopeFields },
  { additionalProperties: true, description: 'The full document in `invoice` (partial updates are not supported).' },
);

export const PublicIdParams = Type.Object({
  public_id: S('Document public id (no control characters: 400 invalid_request).', { minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]+$' }),
});

export const CreateHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    S('Same key and body within 24 h replays the first response; same key, other body: 409 idempotency_key_reused.', {
      minLength: 1,
      maxLength: 255,
    }),
  ),
});

export const UpdateHeaders = Type.Object({
  'if-match': Type.Optional(
    S('The ETag of the revision you edited (`*` for any); a different current revision is 409 revision_conflict.', {
      maxLength: 300,
    }),
  ),
});

export const ListQuery = Type.Object({
  q: Type.Optional(S('Case-insensitive substring of the number, seller or buyer name or INN. No control characters (400 invalid_query).', { maxLength: 200 })),
  date_from: Type.Optional(S('Documents dated on or after this date (inclusive).', { format: 'date' })),
  date_to: Type.Optional(S('Documents dated on or before this date (inclusive).', { format: 'date' })),
  updated_since: Type.Optional(
    S('Only documents modified at or after this instant (ISO 8601 date-time), for integrators that sync.', { format: 'date-time' }),
  ),
  changed_since: Type.Optional(
    S('Only documents changed at or after this instant (ISO 8601 date-time): any change, including seller/buyer status, e-mail and EDO news (`changed_at`).', { format: 'date-time' }),
  ),
  limit: Type.Optional(
    Type.Integer({ format: 'int32', minimum: 1, maximum: 200, default: 50, description: 'Page size, 1–200, decimal digits only (`0x10`, `1e3`, `+5` are 400 invalid_query).' }),
  ),
  offset: Type.Optional(
    Type.Integer({ format: 'int32', minimum: 0, maximum: 10_000_000, default: 0, description: 'Items to skip, 0–10,000,000, decimal digits only.' }),
  ),
});
export type ListQuery = Static<typeof ListQuery>;

const Money = (description: string) => Type.Number({ description });

export const InvoiceListItem = Type.Object({
  public_id: S('Document public id.'),
  number: S('Invoice number.'),
  date: S('Invoice date.'),
  currency: S('Currency.'),
  direction: S('incoming or outgoing.'),
  seller_name: S('Seller name.'),
  seller_inn: S('Seller INN.'),
  buyer_name: S('Buyer name.'),
  buyer_inn: Type.Union([Type.String(), Type.Null()], { description: 'Buyer INN, null when not given.' }),
  totals: Type.Object({ subtotal: Money('Net sum.'), vat_total: Money('VAT sum.'), total: Money('Amount to pay.') }),
  status: InvoiceStatus,
  editor_mode: S('api or portal.'),
  created_at: S('Creation time.'),
  last_modified_at: S('Last modification time.'),
  changed_at: S('Time of the latest change of any kind (edit, status, e-mail, EDO, view): what `changed_since` filters on.'),
  invoice_url: S('The buyer share page.'),
});

export const InvoiceList = Type.Object(
  {
    ok: Type.Literal(true, { description: 'Always true on success.' }),
    total: Type.Integer({ description: 'Number of documents matching the filters (all pages).' }),
    limit: Type.Integer({ description: 'Page size used.' }),
    offset: Type.Integer({ description: 'Offset used.' }),
    items: Type.Array(InvoiceListItem, { description: 'Ordered by date descending, then creation descending.' }),
    demo_mode: Type.Optional(Type.Boolean({ description: 'True with the demo token: the sample list.' })),
    demo_guids: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Demo mode: the sample ids.' })),
  },
  { $id: 'InvoiceList', description: 'A page of documents.' },
);
export type InvoiceList = Static<typeof InvoiceList>;

/** Page of `GET …/revisions` (operating contract, section 5). */
export const RevisionsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1–100 (default 20).' }),
  ),
  offset: Type.Optional(
    Type.Integer({ format: 'int32', minimum: 0, maximum: 10_000_000, default: 0, description: 'Revisions to skip, newest first.' }),
  ),
});
export type RevisionsQuery = Static<typeof RevisionsQuery>;

export const RevisionParams = Type.Object({
  public_id: S('Document public id.', { minLength: 1, maxLength: 200 }),
  revision: Type.Integer({ format: 'int32', minimum: 1, maximum: 2_147_483_647, description: 'Revision number (1 on create).' }),
});

const revisionSummaryFields = {
  revision: Type.Integer({ format: 'int32', minimum: 1, maximum: 2_147_483_647, description: 'Revision number.' }),
  modified_at: S('When this revision was written (ISO 8601).', { maxLength: 40 }),
  modified_by_login: Type.Union([S('Login or API key name.', { maxLength: 200 }), Type.Null()], { description: 'Who wrote it.' }),
  editor_mode: S('api or portal.', { maxLength: 10 }),
  seller_status: S('Seller status in this revision.', { maxLength: 20 }),
  total: Money('Total in this revision.'),
};

export const InvoiceRevisionSummary = Type.Object(
  {
    ...revisionSummaryFields,
    superseded_at: S('When the next revision replaced it (ISO 8601).', { maxLength: 40 }),
  },
  { description: 'A previous revision without its document (fetch one with GET …/revisions/{revision}).' },
);

export const InvoiceRevisionList = Type.Object(
  {
    ok: Type.Literal(true, { description: 'Always true on success.' }),
    public_id: S('Document public id.', { maxLength: 200 }),
    current_revision: Type.Integer({ format: 'int32', minimum: 1, maximum: 2_147_483_647, description: 'The current revision.' }),
    total: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'Previous revisions kept (all pages).' }),
    limit: Type.Integer({ format: 'int32', minimum: 1, maximum: 100, description: 'Page size used.' }),
    offset: Type.Integer({ format: 'int32', minimum: 0, maximum: 10_000_000, description: 'Offset used.' }),
    revisions: Type.Array(InvoiceRevisionSummary, {
      maxItems: 100,
      description: 'Previous revisions, newest first, without their documents. Older ones beyond the retention rule (INVOICING_REVISIONS_KEEP) are deleted.',
    }),
  },
  { $id: 'InvoiceRevisionList', description: 'A page of the previous revisions of a document, newest first.' },
);
export type InvoiceRevisionList = Static<typeof InvoiceRevisionList>;

export const InvoiceRevisionDetail = Type.Object(
  {
    ok: Type.Literal(true, { description: 'Always true on success.' }),
    public_id: S('Document public id.', { maxLength: 200 }),
    current_revision: Type.Integer({ format: 'int32', minimum: 1, maximum: 2_147_483_647, description: 'The current revision.' }),
    ...revisionSummaryFields,
    superseded_at: Type.Union([S('When the next revision replaced it (ISO 8601).', { maxLength: 40 }), Type.Null()], {
      description: 'When the next revision replaced it; null for the current revision.',
    }),
    invoice: Type.Object({}, { additionalProperties: true, description: 'The document as it was in this revision.' }),
  },
  { $id: 'InvoiceRevisionDetail', description: 'One revision of a document with its document.' },
);
export type InvoiceRevisionDetail = Static<typeof InvoiceRevisionDetail>;
