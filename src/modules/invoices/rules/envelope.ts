/**
 * The write envelope of POST and PUT (spec 2.1): where the document is and what the envelope
 * asks for besides it. Pure; the document itself is checked by `validateInvoice`.
 *
 * Decisions:
 * - `partial_update` or `patch` is refused whatever its value, even `false`, at the root or
 *   inside `invoice` (spec: "any request with it"), and before anything else: a client that
 *   believes it is patching must learn that first, not that its partial document is incomplete.
 * - POST with a root-level document: the envelope keys are taken out of it, so they are never
 *   stored as document properties. Any other root key belongs to the document.
 * - POST and PUT with `invoice`: the envelope keys are read at the root only; keys beside
 *   `invoice` other than the envelope's are allowed and ignored (spec: additional properties).
 * - `actor_login` is trimmed; blank or null means "not given". null flags mean "not given".
 */
import { ApiError } from '../../../shared/errors.js';

export type WriteMethod = 'POST' | 'PUT';

export interface WriteEnvelope {
  /** The document to validate; a shallow copy, so removing envelope keys never touches the body. */
  document: Record<string, unknown>;
  /** Recorded as the creating or modifying login; null when not given. */
  actorLogin: string | null;
  /** True when `notify_recipients` or `send_notifications` is true. */
  notify: boolean;
}

/** Envelope keys beside the document; in a root-level POST document they are not document fields. */
export const ENVELOPE_KEYS = ['actor_login', 'notify_recipients', 'send_notifications'] as const;
const PARTIAL_UPDATE_KEYS = ['partial_update', 'patch'] as const;
export const ACTOR_LOGIN_MAX_LENGTH = 200;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function partialUpdatePaths(body: Record<string, unknown>): string[] {
  const inner = body.invoice;
  const paths: string[] = PARTIAL_UPDATE_KEYS.filter((k) => Object.hasOwn(body, k));
  if (isRecord(inner)) paths.push(...PARTIAL_UPDATE_KEYS.filter((k) => Object.hasOwn(inner, k)).map((k) => `invoice.${k}`));
  return paths;
}

interface FieldError {
  field: string;
  code: string;
  message: string;
}

function readFlag(body: Record<string, unknown>, key: string, errors: FieldError[]): boolean {
  const value = body[key];
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  errors.push({ field: key, code: 'invalid_type', message: `${key} must be true or false` });
  return false;
}

function readActorLogin(body: Record<string, unknown>, errors: FieldError[]): string | null {
  const value = body.actor_login;
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    errors.push({ field: 'actor_login', code: 'invalid_type', message: 'actor_login must be a string' });
    return null;
  }
  const login = value.trim();
  if (login.includes('\u0000')) {
    errors.push({ field: 'actor_login', code: 'invalid_character', message: 'actor_login must not contain the NUL character (U+0000)' });
    return null;
  }
  if ([...login].length > ACTOR_LOGIN_MAX_LENGTH) {
    errors.push({ field: 'actor_login', code: 'too_long', message: `actor_login must be at most ${ACTOR_LOGIN_MAX_LENGTH} characters` });
    return null;
  }
  return login === '' ? null : login;
}

function documentOf(body: Record<string, unknown>, method: WriteMethod): Record<string, unknown> {
  if (Object.hasOwn(body, 'invoice')) {
    if (!isRecord(body.invoice)) {
      throw new ApiError('invalid_request', { details: '`invoice` must be an object holding the full document' });
    }
    return Object.fromEntries(Object.entries(body.invoice));
  }
  if (method === 'PUT') {
    throw new ApiError('invalid_request', {
      details: 'PUT takes the full document in `invoice` ({"invoice": {...}}); partial updates are not supported',
    });
  }
  const keys = new Set<string>(ENVELOPE_KEYS);
  return Object.fromEntries(Object.entries(body).filter(([k]) => !keys.has(k)));
}

/**
 * Splits a write body into the document and the envelope's options.
 * @throws ApiError `invalid_request` (not an object, no usable `invoice`),
 *   `partial_update_not_supported`, or `validation_failed` (envelope field of the wrong type).
 */
export function parseWriteEnvelope(body: unknown, method: WriteMethod): WriteEnvelope {
  if (!isRecord(body)) throw new ApiError('invalid_request', { details: 'The request body must be a JSON object' });
  const partial = partialUpdatePaths(body);
  if (partial.length > 0) {
    throw new ApiError('partial_update_not_supported', {
      details: `Partial update is not supported (${partial.join(', ')} given): send the full document${method === 'PUT' ? ' in `invoice`' : ''}`,
    });
  }
  const document = documentOf(body, method);

  const errors: FieldError[] = [];
  const actorLogin = readActorLogin(body, errors);
  const notifyRecipients = readFlag(body, 'notify_recipients', errors);
  const sendNotifications = readFlag(body, 'send_notifications', errors);
  if (errors.length > 0) {
    const head = errors.length === 1 ? '1 field is invalid' : `${errors.length} fields are invalid`;
    throw new ApiError('validation_failed', {
      details: `${head}: ${errors.map((e) => e.message).join('; ')}`,
      missing_fields: [],
      errors,
    });
  }
  return { document, actorLogin, notify: notifyRecipients || sendNotifications };
}
