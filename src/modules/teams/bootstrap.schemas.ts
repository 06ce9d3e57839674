/**
 * Schema of the bootstrap file (operating contract, section 3). Ids, names and secrets are
 * required; everything else may be absent and then takes its default when applied.
 *
 * Strictness: every object rejects properties it does not know, with the property's path.
 * A typo such as `max_organisation` or `is_defualt` that is silently ignored would leave a
 * team running under limits or requisites the operator never meant, which is worse than a
 * file written for a newer version failing loudly at start-up. The one exception is a
 * top-level `$schema`, which editors use to find a JSON Schema and which we ignore.
 *
 * Leaf schemas carry `errorMessage`: the text reported after the JSON path when the value
 * does not fit (type or constraint), so the operator reads the rule, not a validator's jargon.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** Schema option read by the error formatter in `bootstrap.ts`. */
export const ERROR_MESSAGE = 'errorMessage';
/** Schema option on an object/record: what to say about a key it does not accept. */
export const UNKNOWN_KEY_MESSAGE = 'unknownKeyMessage';

/** PostgreSQL `integer` is 32-bit; a larger limit would fail on insert rather than here. */
const MAX_INT32 = 2_147_483_647;

const ID_PATTERN = '^[A-Za-z0-9_.-]{1,100}$';
const ID_RULE = '1-100 characters of A-Z, a-z, 0-9, "_", "." and "-"';

const Slug = (description: string) =>
  Type.String({ pattern: ID_PATTERN, description, [ERROR_MESSAGE]: `must be a string of ${ID_RULE}` });

/** Ids of reference data: free text, bounded by the database column. */
const RefId = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: '\\S',
    description,
    [ERROR_MESSAGE]: 'must be a non-blank string of at most 100 characters',
  });

const Text = (description: string, maxLength: number, required = false) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: '\\S',
    description,
    [ERROR_MESSAGE]: `must be a non-blank string of at most ${maxLength} characters${required ? '' : ' (or be left out)'}`,
  });

const Digits = (description: string, pattern: string, rule: string) =>
  Type.String({ pattern, description, [ERROR_MESSAGE]: `must be a string of ${rule}` });

const Flag = (description: string) => Type.Boolean({ description, [ERROR_MESSAGE]: 'must be true or false' });

const Count = (description: string) =>
  Type.Integer({ minimum: 0, maximum: MAX_INT32, description, [ERROR_MESSAGE]: `must be an integer from 0 to ${MAX_INT32}` });

const Email = (description: string) =>
  Type.String({
    maxLength: 254,
    pattern: '^[^\\s@<>(),;"]+@[^\\s@<>(),;"]+$',
    description,
    [ERROR_MESSAGE]: 'must be an e-mail address such as billing@example.com',
  });

const Strict = <T extends Record<string, TSchema>>(properties: T, description: string) =>
  Type.Object(properties, {
    additionalProperties: false,
    description,
    [UNKNOWN_KEY_MESSAGE]: 'is not a known property (check the spelling)',
  });

export const BootstrapRate = Strict(
  {
    per_sec: Type.Optional(Count('Requests per second.')),
    per_min: Type.Optional(Count('Requests per minute.')),
    per_day: Type.Optional(Count('Requests per day (UTC).')),
  },
  'Request rate limits; an absent window takes the built-in default tariff value.',
);

export const BootstrapTariff = Strict(
  {
    max_organizations: Type.Optional(Count('Active organizations usable as sellers, in file order.')),
    max_api_keys: Type.Optional(Count('Active API keys honoured, ordered by id.')),
    key_rate: Type.Optional(BootstrapRate),
    team_rate: Type.Optional(BootstrapRate),
    emails_per_day: Type.Optional(Count('E-mails the team may send per day (UTC).')),
    external_share: Type.Optional(Flag('Whether share links may be opened outside the team.')),
    max_webhook_endpoints: Type.Optional(Count('Webhook endpoints the team may have (default 5).')),
    max_storage_mb: Type.Optional(Type.Integer({ minimum: 1, maximum: 16_777_216, description: 'Megabytes the team\'s documents and kept revisions may take (default 1024); a write past it is refused with 403 storage_over_tariff_limit.' })),
  },
  'A tariff; absent limits take the built-in default tariff value.',
);

export const BootstrapApiKey = Strict(
  {
    id: Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Key id, unique across all teams and service keys.',
      [ERROR_MESSAGE]: 'must be a positive integer',
    }),
    name: Text('Human-readable key name.', 200, true),
    secret: Type.String({
      pattern: '^[\\x21-\\x7E]{8,512}$',
      description: 'The secret clients send; only its SHA-256 hash is stored.',
      [ERROR_MESSAGE]: 'must be a string of at least 8 characters (at most 512, printable ASCII without spaces)',
    }),
    active: Type.Optional(Flag('An inactive key is refused with api_key_inactive. Default true.')),
  },
  'An API key.',
);

export const BootstrapOrganization = Strict(
  {
    id: RefId('Organization id, unique within the team.'),
    name: Text('Legal name.', 500, true),
    inn: Type.Optional(Digits('INN: the seller is matched by it.', '^(\\d{10}|\\d{12})$', '10 or 12 digits')),
    kpp: Type.Optional(Digits('KPP.', '^\\d{4}[0-9A-Z]{2}\\d{3}$', '9 characters: 4 digits, 2 digits or capital letters, 3 digits')),
    email: Type.Optional(Email('Billing e-mail.')),
    address: Type.Optional(Text('Legal address.', 1000)),
    edo_id: Type.Optional(
      Type.String({
        pattern: '^[^\\s]{1,46}$',
        description: 'EDO participant id.',
        [ERROR_MESSAGE]: 'must be a string of 1-46 characters without spaces',
      }),
    ),
    active: Type.Optional(Flag('An inactive organization cannot be a seller. Default true.')),
  },
  'A seller organization of the team.',
);

export const BootstrapBankAccount = Strict(
  {
    id: RefId('Bank account id, unique within the team.'),
    organization_id: RefId('The organization (of the same team) holding the account.'),
    bank_name: Type.Optional(Text('Bank name.', 500)),
    bik: Type.Optional(Digits('BIK.', '^\\d{9}$', '9 digits')),
    account: Type.Optional(Digits('Settlement account.', '^\\d{20}$', '20 digits')),
    corr_account: Type.Optional(Digits('Correspondent account.', '^\\d{20}$', '20 digits')),
    is_default: Type.Optional(
      Flag('The account used when a document omits bank requisites; if none of an organization\'s accounts says so, the first listed is.'),
    ),
  },
  'A bank account of one of the team\'s organizations.',
);

export const BootstrapManager = Strict(
  {
    id: RefId('Manager id, unique within the team.'),
    name: Text('Full name.', 500, true),
    email: Type.Optional(Email('E-mail.')),
    phone: Type.Optional(Text('Phone number as written.', 50)),
  },
  'A manager of the team.',
);

export const BootstrapSigner = Strict(
  {
    id: RefId('Signer id, unique within the team.'),
    organization_id: Type.Optional(RefId('The organization (of the same team) the signer signs for.')),
    name: Text('Full name.', 500, true),
    position: Type.Optional(Text('Position as printed on documents.', 500)),
    role: Type.Optional(Text('Signing role, e.g. director or accountant.', 40)),
  },
  'A person who signs the team\'s documents.',
);

export const BootstrapTeam = Strict(
  {
    id: Slug('Team id.'),
    name: Text('Team name.', 500, true),
    tariff: Type.Optional(Slug('Tariff id, defined in this file or already in the database; absent: the built-in default.')),
    locale: Type.Optional(
      Type.Union([Type.Literal('ru'), Type.Literal('en')], {
        description: 'Language of e-mails and pages. Default ru.',
        [ERROR_MESSAGE]: 'must be "ru" or "en"',
      }),
    ),
    api_keys: Type.Optional(Type.Array(BootstrapApiKey, { [ERROR_MESSAGE]: 'must be an array' })),
    organizations: Type.Optional(Type.Array(BootstrapOrganization, { [ERROR_MESSAGE]: 'must be an array' })),
    bank_accounts: Type.Optional(Type.Array(BootstrapBankAccount, { [ERROR_MESSAGE]: 'must be an array' })),
    managers: Type.Optional(Type.Array(BootstrapManager, { [ERROR_MESSAGE]: 'must be an array' })),
    signers: Type.Optional(Type.Array(BootstrapSigner, { [ERROR_MESSAGE]: 'must be an array' })),
  },
  'A team with its keys and reference data.',
);

export const BootstrapFile = Type.Object(
  {
    $schema: Type.Optional(Type.String({ description: 'Ignored; lets editors find a JSON Schema.' })),
    tariffs: Type.Optional(
      Type.Record(Type.String({ pattern: ID_PATTERN }), BootstrapTariff, {
        additionalProperties: false,
        description: 'Tariffs by id.',
        [ERROR_MESSAGE]: 'must be an object of tariffs by id',
        [UNKNOWN_KEY_MESSAGE]: `is not a valid tariff id (${ID_RULE})`,
      }),
    ),
    teams: Type.Optional(Type.Array(BootstrapTeam, { [ERROR_MESSAGE]: 'must be an array' })),
    service_keys: Type.Optional(
      Type.Array(BootstrapApiKey, { description: 'Keys not bound to a team; they need x-tenant-id.', [ERROR_MESSAGE]: 'must be an array' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Bootstrap file: tariffs, teams and keys applied idempotently at start-up or by `invoicing import`.',
    [ERROR_MESSAGE]: 'must be a JSON object',
    [UNKNOWN_KEY_MESSAGE]: 'is not a known property (expected tariffs, teams or service_keys)',
  },
);

export type BootstrapRate = Static<typeof BootstrapRate>;
export type BootstrapTariff = Static<typeof BootstrapTariff>;
export type BootstrapApiKey = Static<typeof BootstrapApiKey>;
export type BootstrapOrganization = Static<typeof BootstrapOrganization>;
export type BootstrapBankAccount = Static<typeof BootstrapBankAccount>;
export type BootstrapManager = Static<typeof BootstrapManager>;
export type BootstrapSigner = Static<typeof BootstrapSigner>;
export type BootstrapTeam = Static<typeof BootstrapTeam>;
export type BootstrapFile = Static<typeof BootstrapFile>;
