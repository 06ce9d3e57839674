/**
 * Wire shapes of the documents API (spec 2.3, 2.4, 2.6). One definition each: the routes
 * serialize with them, the OpenAPI document is generated from them, the types come from them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { EdoSync } from '../edo/index.js';
import { Notifications } from '../notifications/index.js';

const S = (description: string) => Type.String({ description });
const kindFields = {
  document_public_id: S('The document public id (same as `public_id`).'),
  document_kind: S('Kind of the document: `invoice`.'),
};

export const InvoiceStatus = Type.Object(
  {
    seller_status: S('draft, issued, paid or cancelled.'),
    seller_status_label: S('Russian label: Черновик, Выставлен, Оплачен, Отменён.'),
    buyer_status: S('not_sent, sent, viewed or payment_reported.'),
    buyer_status_label: S('Russian label: Не отправлен, Отправлен, Просмотрен, Сообщил об оплате.'),
    service_status: S('active, or restricted when a tariff rule stopped sharing or e-mail.'),
    service_status_label: S('Russian label: Активен, Ограничен.'),
    service_status_reason: S('The tariff rule behind `restricted`; empty when active.'),
  },
  { description: 'The three status indicators with Russian labels.' },
);

export const ValidationIssue = Type.Object(
  {
    field: S('Path of the field, e.g. `seller.inn` or `items[2].vat_pct`.'),
    code: S('Machine-readable reason, e.g. `inn_checksum`, `account_checksum`, `unusual_vat_rate`.'),
    message: S('Human-readable reason.'),
  },
  { additionalProperties: true },
);
export type ValidationIssue = Static<typeof ValidationIssue>;

export const ValidationOutcome = Type.Object(
  {
    valid: Type.Boolean({ description: 'True when the document has no errors (a stored document always has none).' }),
    errors: Type.Array(ValidationIssue, { description: 'Errors; a write with errors is refused with 400.' }),
    warnings: Type.Array(ValidationIssue, {
      description: 'Warnings, stored and returned: INN, KPP, OGRN/OGRNIP (`ogrn_checksum`), BIK and account checksums (treasury BIKs 00…/01…: the ЕКС keyed with the corr. prefix, treasury accounts 03… on their shape), unusual VAT rates, EDO id format, a seller without an EDO id (`seller_edo_id_missing`) when `buyer_edo_id` is given.',
    }),
  },
  { description: 'Validation of the stored document.' },
);

export const ShareRecipientLink = Type.Object(
  {
    email: S('Recipient address.'),
    name: S('Recipient name (empty when not given).'),
    position: S('Recipient position (empty when not given).'),
    url: S('The recipient’s own share page link.'),
    document_url: S('The recipient’s own link to the printable PDF.'),
    contact_id: Type.Union([Type.Integer(), Type.Null()], { description: 'Contact id in the address book; null when none.' }),
  },
  { additionalProperties: true },
);

export const ShareLinks = Type.Object(
  {
    colleague_url: S('Share page for colleagues (opening it does not mark the document viewed).'),
    colleague_document_url: S('Printable PDF through the colleague link.'),
    buyer_url: S('Share page for the buyer.'),
    buyer_document_url: S('Printable PDF through the buyer link.'),
    recipients: Type.Array(ShareRecipientLink, { description: 'One link per API recipient, each with its own token.' }),
  },
  { description: 'Public share links, each carrying its own random token of 128 bits or more.' },
);

export const InvoiceLinks = Type.Object(
  {
    share_url: S('The buyer share page.'),
    document_url: S('The printable PDF.'),
    portal_view_url: S('Portal view page (signed token, view mode).'),
    portal_document_view_url: S('Portal print view of the document (signed token, view mode): the printable form inside the portal, where `portal_view_url` is the staff page with metadata and actions.'),
    portal_edit_url: S('Portal edit page (signed token, edit mode).'),
    portal_document_edit_url: S('Portal editor of the document body (signed token, edit mode); `portal_edit_url` opens the same editor from the staff page.'),
    qr_url: Type.Optional(S('PNG of the payment QR code.')),
    api_url: Type.Optional(S('This document in the API.')),
  },
  { additionalProperties: true, description: 'Every link of the document.' },
);

export const ApiRecipient = Type.Object(
  {
    email: S('Recipient address as given.'),
    name: S('Recipient name (empty when not given).'),
    position: S('Recipient position (empty when not given).'),
    buyer_invoice_url: S('The recipient’s own share page link.'),
    buyer_document_url: S('The recipient’s own link to the printable PDF.'),
    contact_id: Type.Union([Type.Integer(), Type.Null()], { description: 'Contact id; null when none.' }),
  },
  { additionalProperties: true },
);

const Obj = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const InvoiceMetadata = Type.Object(
  {
    public_id: Type.Optional(S('Document public id.')),
    document_public_id: Type.Optional(S('Document public id.')),
    document_kind: Type.Optional(S('`invoice`.')),
    kind_version: Type.Optional(S('Version of the document kind’s format: `1`.')),
    document_title: Type.Optional(S('Title, "Счёт № N от DD.MM.YYYY" unless the payload sets `document_title`.')),
    package_public_id: Type.Optional(S('Id of the package that groups this document with related ones.')),
    legacy_invoice_public_id: Type.Optional(S('Id under which older integrations know the invoice (the public id).')),
    source_type: Type.Optional(S('Where the document was created: `api` or `portal`.')),
    editor_mode: Type.Optional(S('Who modified it last: `api` or `portal`.')),
    information_system: Type.Optional(S('The caller’s information system, as sent.')),
    kind_ordinal: Type.Optional(Type.Integer({ description: 'Ordinal of the kind within the package: 1.' })),
    sort_order: Type.Optional(Type.Integer({ description: 'Sort order within the package: 0.' })),
    api_key_id: Type.Optional(Type.Integer({ description: 'Id of the API key that made the last API write.' })),
    title_is_custom: Type.Optional(Type.Boolean({ description: 'True when the payload set `document_title`.' })),
    public_share_enabled: Type.Optional(Type.Boolean({ description: 'False turns every share link off (404).' })),
    created_at: Type.Optional(S('Creation time, ISO 8601 UTC.')),
    last_modified_at: Type.Optional(S('Last modification time, ISO 8601 UTC.')),
    changed_at: Type.Optional(S('Time of the latest change of any kind (edit, status, e-mail, EDO, view), ISO 8601 UTC.')),
    api_created_at: Type.Optional(S('Creation time through the API.')),
    api_updated_at: Type.Optional(S('Last update time through the API.')),
    created_by_login: Type.Optional(S('`actor_login` of the creating request (or the key name).')),
    last_modified_by_login: Type.Optional(S('`actor_login` of the last modifying request (or the key name).')),
    seller_edo_id: Type.Optional(S('EDO participant id of the seller organization.')),
    buyer_edo_id: Type.Optional(S('EDO participant id of the buyer, as sent.')),
    api_key_name: Type.Optional(S('Name of the API key that made the last API write.')),
    api_request_host: Type.Optional(S('Host header of the last API write.')),
    revision: Type.Optional(Type.Integer({ description: 'Revision number, 1 on create, +1 per update (the ETag).' })),
    viewed_at: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'First open by the buyer or a recipient.' })),
    status: Type.Optional(InvoiceStatus),
    validation: Type.Optional(ValidationOutcome),
    notifications: Type.Optional(Obj('The latest e-mail notification outcome (shape of `notifications`).')),
    edo: Type.Optional(
      Type.Union([EdoSync, Type.Null()], {
        description: 'EDO synchronization with the buyer (`buyer_edo_id`): its state and incoming links; null when it never started (see docs/edo.md).',
      }),
    ),
    api_recipients: Type.Optional(Type.Array(ApiRecipient, { description: 'API recipients with their own links.' })),
    links: Type.Optional(InvoiceLinks),
  },
  { additionalProperties: true, description: 'Metadata of the document.' },
);

export const DocumentSummary = Type.Object(
  {
    public_id: S('Document public id.'),
    ...kindFields,
    kind_version: S('`1`.'),
    document_title: S('Title of the document.'),
    package_public_id: S('Package id.'),
    legacy_invoice_public_id: S('Legacy id (the public id).'),
    kind_ordinal: Type.Integer({ description: '1.' }),
    sort_order: Type.Integer({ description: '0.' }),
    title_is_custom: Type.Boolean({ description: 'True when the payload set `document_title`.' }),
  },
  { description: 'Summary of the written document.' },
);

export const ShareGate = Type.Object(
  {
    ...kindFields,
    available: Type.Boolean({ description: 'True when the share links can be opened now.' }),
    public_share_enabled: Type.Boolean({ description: 'The document’s own switch.' }),
    external_share_allowed: Type.Boolean({ description: 'Whether the team’s tariff allows external sharing.' }),
    reason: S('Why the links are unavailable: `public_share_disabled`, `tariff_external_share_disabled`; empty when available.'),
  },
  { additionalProperties: true, description: 'Whether external publication is available now.' },
);

export const ApiInfo = Type.Object(
  {
    ...kindFields,
    key_id: Type.Integer({ description: 'Id of the API key of this request (0 for the demo token).' }),
    key_name: S('Name of the API key of this request.'),
    request_host: S('Host header of this request.'),
    request_id: S('Id of this request (also in X-Request-Id).'),
    revision: Type.Integer({ description: 'Revision of the document after this request.' }),
    etag: S('ETag of the document after this request; send it in If-Match to update safely.'),
  },
  { additionalProperties: true, description: 'About the API call itself.' },
);

const Money = (description: string) => Type.Number({ description });
/** The exact figure of a `Money` field: whole kopecks (cents) as a string, so no JSON number rounds it. */
const MinorUnits = (of: string) =>
  Type.String({
    description: `${of} in kopecks (cents), exact: digits only with a leading minus when negative. Use it instead of the JSON number above about 10^15, where a double loses kopecks.`,
    pattern: '^-?\\d{1,40}$',
    maxLength: 41,
  });

export const Totals = Type.Object(
  {
    ...kindFields,
    subtotal: Money('Sum of the net amounts (without VAT).'),
    vat_total: Money('Sum of the VAT of every line, each rounded half-up to kopecks.'),
    total: Money('subtotal + vat_total: the amount to pay.'),
    currency: S('Currency of the document.'),
    prices_include_vat: Type.Boolean({ description: 'True when prices include VAT (VAT extracted), false when VAT is added on top.' }),
    items_count: Type.Integer({ description: 'Number of lines.' }),
    total_minor_units: S('total in kopecks (cents), digits only, as in the payment QR `Sum`. Exact: the PDF prints from it.'),
    subtotal_minor_units: MinorUnits('subtotal'),
    vat_total_minor_units: MinorUnits('vat_total'),
    amount_in_words: S('The total in Russian words, e.g. "Девятнадцать тысяч семьсот восемьдесят девять рублей 99 копеек".'),
    vat_breakdown: Type.Array(
      Type.Object({
        vat_pct: Type.Union([Type.Number(), Type.Null()], { description: 'Rate; null for без НДС.' }),
        net: Money('Net sum of the lines at this rate.'),
        vat: Money('VAT of the lines at this rate.'),
        gross: Money('Gross sum of the lines at this rate.'),
        net_minor_units: MinorUnits('net'),
        vat_minor_units: MinorUnits('vat'),
        gross_minor_units: MinorUnits('gross'),
      }),
      { description: 'Sums by VAT rate, in order of first appearance.' },
    ),
    lines: Type.Array(
      Type.Object({
        line: Type.Integer({ description: 'Line number, from 1.' }),
        amount: Money('qty × price, rounded half-up to kopecks.'),
        net: Money('Net amount of the line.'),
        vat: Money('VAT of the line.'),
        gross: Money('Gross amount of the line.'),
        vat_pct: Type.Union([Type.Number(), Type.Null()], { description: 'Rate; null for без НДС.' }),
        amount_minor_units: MinorUnits('amount'),
        net_minor_units: MinorUnits('net'),
        vat_minor_units: MinorUnits('vat'),
        gross_minor_units: MinorUnits('gross'),
      }),
      { description: 'Per-line amounts.' },
    ),
  },
  { additionalProperties: true, description: 'Totals in decimal arithmetic, rounded half-up to kopecks per line.' },
);

/** Why the payment QR is off (`qr.reason`), in the order they are checked; docs/domain.md explains each. */
export const QR_OFF_REASONS = [
  'disabled_by_document',
  'invoice_paid',
  'invoice_cancelled',
  'currency_not_rub',
  'zero_total',
  'missing_bank_requisites',
  'invalid_requisites',
  'payload_too_long',
] as const;
export type QrOffReason = (typeof QR_OFF_REASONS)[number];

export const QrInfo = Type.Object(
  {
    ...kindFields,
    enabled: Type.Boolean({
      description:
        'True when the payment QR is shown (API, PDF, qr.png/qr.svg, share page): show_payment_qr, neither paid nor cancelled, RUB, a total above zero, complete and valid bank requisites, a payload within GOST limits.',
    }),
    url: S('PNG of the QR code (on the share base); empty when disabled (the image then answers 404).'),
    svg_url: S('SVG of the QR code; empty when disabled.'),
    payload: S('GOST R 56042-2014 payload as text (ST00012… in UTF-8, or ST00011… whose QR holds windows-1251 bytes); empty when disabled. Purpose is the document’s `purpose` (cut to 210 characters) when given, else "Оплата по счёту № N от ДД.ММ.ГГГГ, <VAT clause>".'),
    encoding: Type.Union([Type.Literal('utf-8'), Type.Literal('windows-1251'), Type.Literal('')], {
      description: 'Encoding of the QR symbol’s bytes, as the payload header declares: `utf-8` (ST00012, the default) or `windows-1251` (ST00011, when the required block passes 300 UTF-8 bytes but fits in windows-1251); empty when disabled.',
    }),
    reason: Type.Union(
      [Type.Literal(''), ...QR_OFF_REASONS.map((r) => Type.Literal(r))],
      {
        description:
          'Why the QR is disabled, checked in this order: `disabled_by_document` (show_payment_qr false), `invoice_paid`, `invoice_cancelled`, `currency_not_rub`, `zero_total`, `missing_bank_requisites`, `invalid_requisites` (a seller BIK, account, corr. account, INN or KPP fails its check; see `warnings`), `payload_too_long` (the required block exceeds 300 bytes in UTF-8 and in windows-1251, or Sum exceeds 18 digits; `warnings` names the field to shorten); empty when enabled.',
      },
    ),
    warnings: Type.Array(ValidationIssue, {
      maxItems: 16,
      description: 'Why the QR is off, per field (`seller.account` `account_checksum`, `seller.name` `qr_payload_too_long`, `items` `qr_sum_too_long`, …); empty when enabled or when `reason` says it all.',
    }),
  },
  { additionalProperties: true, description: 'The payment QR code.' },
);

const linkFields = {
  document_url: Type.Optional(S('The printable PDF (buyer link).')),
  invoice_url: S('The buyer share page.'),
  portal_view_url: S('Portal view page.'),
  portal_document_view_url: Type.Optional(S('Portal print view of the document (signed token, view mode).')),
  portal_edit_url: S('Portal edit page.'),
  portal_document_edit_url: Type.Optional(S('Portal editor of the document body (signed token, edit mode).')),
};

const detailFields = {
  ok: Type.Literal(true, { description: 'Always true for 200 and 207.' }),
  public_id: S('Document public id.'),
  document_public_id: Type.Optional(S('Document public id.')),
  document_kind: Type.Optional(S('`invoice`.')),
  demo_mode: Type.Optional(Type.Boolean({ description: 'True in demo mode (nothing was stored).' })),
  demo_guids: Type.Optional(Obj('Demo mode: the ids the response uses, none of them stored.')),
  ...linkFields,
  share_links: ShareLinks,
  status: InvoiceStatus,
  validation: ValidationOutcome,
  metadata: InvoiceMetadata,
  invoice: Obj('The stored document: the payload with the defaults and the seller requisites filled in.'),
};

/** GET one (spec 2.3); also carries the 2.4 blocks, `notifications` being the latest outcome. */
export const InvoiceDetail = Type.Object(
  {
    ...detailFields,
    document: Type.Optional(DocumentSummary),
    notifications: Type.Optional(Notifications),
    share_gate: Type.Optional(ShareGate),
    api: Type.Optional(ApiInfo),
    totals: Type.Optional(Totals),
    qr: Type.Optional(QrInfo),
  },
  { $id: 'InvoiceDetail', additionalProperties: false, description: 'A document with its links, status and metadata.' },
);
export type InvoiceDetail = Static<typeof InvoiceDetail>;

/** Create and update (spec 2.3 plus 2.4). */
export const InvoiceWriteResponse = Type.Object(
  {
    ...detailFields,
    document: DocumentSummary,
    notifications: Notifications,
    share_gate: ShareGate,
    api: ApiInfo,
    totals: Totals,
    qr: QrInfo,
  },
  { $id: 'InvoiceWriteResponse', additionalProperties: false, description: 'The written document and what happened.' },
);
export type InvoiceWriteResponse = Static<typeof InvoiceWriteResponse>;
