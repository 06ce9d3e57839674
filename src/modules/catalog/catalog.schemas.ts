import { Type, type Static } from '@sinclair/typebox';

/** A string or null; the description goes on the union so generated clients show it. */
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Union([Type.String(), Type.Null()], { description: schema.description });

export const CatalogOrganization = Type.Object(
  {
    id: Type.String({ description: 'Organization id within the team.' }),
    name: Type.String({ description: 'Legal name.' }),
    inn: Type.String({ description: 'Tax number (INN), 10 or 12 digits. A document seller must match an active organization by INN.' }),
    kpp: Nullable(Type.String({ description: 'KPP (tax registration reason code).' })),
    email: Nullable(Type.String({ description: 'Billing e-mail.' })),
    address: Nullable(Type.String({ description: 'Legal address.' })),
    edo_id: Nullable(Type.String({ description: 'EDO participant id of the organization.' })),
    active: Type.Boolean({ description: 'Inactive organizations cannot be the seller of a document.' }),
    within_tariff_limit: Type.Boolean({
      description: "True when the organization is active and among the first `max_organizations` active organizations of the team's tariff.",
    }),
  },
  { description: 'An organization of the team (a possible seller).' },
);

export const CatalogBankAccount = Type.Object(
  {
    id: Type.String({ description: 'Bank account id within the team.' }),
    organization_id: Type.String({ description: 'The organization that holds the account.' }),
    bank_name: Nullable(Type.String({ description: 'Bank name.' })),
    bik: Nullable(Type.String({ description: 'BIK of the bank, 9 digits.' })),
    account: Nullable(Type.String({ description: 'Settlement account, 20 digits.' })),
    corr_account: Nullable(Type.String({ description: "Bank's correspondent account, 20 digits." })),
    is_default: Type.Boolean({ description: 'The default account fills the seller requisites a document omits.' }),
  },
  { description: 'A bank account of one of the team organizations.' },
);

export const CatalogManager = Type.Object(
  {
    id: Type.String({ description: 'Manager id within the team.' }),
    name: Type.String({ description: 'Full name.' }),
    email: Nullable(Type.String({ description: 'E-mail (Reply-To of notification e-mails).' })),
    phone: Nullable(Type.String({ description: 'Phone number.' })),
  },
  { description: 'A manager of the team who may be named on documents.' },
);

export const CatalogSigner = Type.Object(
  {
    id: Type.String({ description: 'Signer id within the team.' }),
    organization_id: Nullable(Type.String({ description: 'The organization the signer signs for, when bound to one.' })),
    name: Type.String({ description: 'Full name.' }),
    position: Nullable(Type.String({ description: 'Job title, e.g. Генеральный директор.' })),
    role: Nullable(Type.String({ description: 'Signing role: director, accountant, …' })),
  },
  { description: 'A person who signs documents.' },
);

const LabelledValue = Type.Object({
  value: Type.String({ description: 'Machine value.' }),
  label: Type.String({ description: 'Russian label.' }),
});

export const CatalogEnums = Type.Object(
  {
    currencies: Type.Array(
      Type.Object({ code: Type.String({ description: 'ISO 4217 code.' }), name: Type.String({ description: 'Russian name.' }) }),
      { description: 'Accepted document currencies.' },
    ),
    invoice_directions: Type.Array(LabelledValue, { description: 'Values of invoice_direction.' }),
    vat_rates: Type.Array(
      Type.Object({
        value: Type.Union([Type.Number(), Type.Null()], { description: 'vat_pct value; null means без НДС.' }),
        label: Type.String({ description: 'Label as printed.' }),
      }),
      { description: 'Common VAT rates (any 0-100 is accepted; others give a warning).' },
    ),
    seller_statuses: Type.Array(LabelledValue, { description: 'Values of seller_status.' }),
    buyer_statuses: Type.Array(LabelledValue, { description: 'Values of buyer_status.' }),
    service_statuses: Type.Array(LabelledValue, { description: 'Values of service_status.' }),
    units: Type.Array(
      Type.Object({
        code: Type.String({ description: 'Unit as written on the document.' }),
        okei: Type.String({ description: 'OKEI code.' }),
        name: Type.String({ description: 'Full name.' }),
      }),
      { description: 'Common units of measure with OKEI codes.' },
    ),
  },
  { description: 'Enumerated values with Russian labels.' },
);

export const CatalogResponse = Type.Object(
  {
    ok: Type.Literal(true, { description: 'Always true on success.' }),
    demo_mode: Type.Optional(Type.Boolean({ description: 'True when called with the demo token: a sample catalog.' })),
    organizations: Type.Array(CatalogOrganization, { description: 'Organizations of the team in bootstrap order.' }),
    bank_accounts: Type.Array(CatalogBankAccount, { description: 'Bank accounts of the team organizations.' }),
    managers: Type.Array(CatalogManager, { description: 'Managers of the team.' }),
    signers: Type.Array(CatalogSigner, { description: 'Signers of the team.' }),
    enums: CatalogEnums,
  },
  { $id: 'CatalogResponse', description: 'Reference catalog of the team that owns the API key.' },
);
export type CatalogResponse = Static<typeof CatalogResponse>;
