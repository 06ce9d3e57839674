/**
 * The event types and the schema of each one's `data` (one definition: the feed, the webhook
 * bodies and the OpenAPI `webhooks` section all come from here).
 */
import { Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox';

/** Text without control characters (tab and line breaks allowed). */
const TEXT = '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$';
const PublicId = Type.String({ maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'The document the event is about (`public_id`).' });
const Revision = Type.Integer({ format: 'int32', minimum: 1, maximum: 2_147_483_647, description: 'The document revision the event describes.' });
const Short = (description: string, maxLength = 200) => Type.String({ maxLength, pattern: TEXT, description });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const documentData = <P extends TProperties>(extra: P, description: string) =>
  Type.Object({ public_id: PublicId, revision: Revision, ...extra } as { public_id: typeof PublicId; revision: typeof Revision } & P, {
    additionalProperties: false,
    description,
  });

export const EVENT_DATA = {
  'invoice.created': documentData(
    { seller_status: Short('Seller status of the new document.', 20), number: Short('Document number.', 100) },
    'A document was created (API or import).',
  ),
  'invoice.updated': documentData(
    { previous_revision: Type.Integer({ format: 'int32', minimum: 1, maximum: 2_147_483_647, description: 'The revision this one replaced.' }) },
    'A document was fully updated (API or the portal edit page); `revision` is the new one.',
  ),
  'invoice.status_changed': documentData(
    {
      status: Type.Literal('seller_status', { description: 'Which status moved (the seller status).' }),
      from: Short('Previous value.', 20),
      to: Short('New value.', 20),
    },
    'The seller status moved (e.g. issued → paid).',
  ),
  'invoice.viewed': documentData(
    { buyer_status: Short('Buyer status after the view.', 20) },
    'The buyer or a recipient opened the document for the first time.',
  ),
  'invoice.payment_reported': documentData({}, 'The buyer pressed "I have paid" on the share page.'),
  'invoice.restricted': documentData(
    { reason: Short('The tariff rule that restricted sharing or e-mail, e.g. emails_per_day_exceeded.', 60) },
    'The document became restricted (service_status) by a tariff rule.',
  ),
  'notification.sent': documentData({ recipient: Short('The address the e-mail went to.', 320) }, 'An e-mail of the document was accepted by the mail server.'),
  'notification.failed': documentData(
    {
      recipient: Short('The address.', 320),
      code: Short('Machine-readable reason (invalid_address, smtp_rejected, smtp_error, …).', 40),
      reason: Short('The SMTP reply or error text.', 1000),
    },
    'An e-mail of the document was given up (after its retries or at once when permanent).',
  ),
  'edo.status_changed': documentData(
    {
      job_id: Short('The EDO job (one per sent revision).', 40),
      from: Short('Previous EDO status.', 20),
      to: Short('New EDO status: sent, delivered, accepted, rejected or failed.', 20),
      operator: Short('The EDO operator.', 40),
      operator_document_id: Nullable(Short('The operator’s id of the document.', 200)),
      seller_edo_id: Nullable(Short('Sender participant id.', 100)),
      buyer_edo_id: Short('Recipient participant id.', 100),
      rejection_reason: Nullable(Short('Why the buyer rejected it (status rejected).', 1000)),
    },
    'The EDO status of a sent revision moved.',
  ),
  'webhook_endpoint.disabled': Type.Object(
    {
      endpoint_id: Short('The endpoint.', 40),
      url: Short('Its URL.', 2048),
      reason: Short('Why it was disabled: `failing_for_3_days` or `secret_unreadable` (as the endpoint’s `disabled_reason`).', 200),
    },
    {
      additionalProperties: false,
      description: 'The service disabled an endpoint: it failed for the whole retry window (3 days), or its signing secret cannot be decrypted.',
    },
  ),
  ping: Type.Object(
    { endpoint_id: Short('The endpoint tested.', 40) },
    { additionalProperties: false, description: 'A test delivery (`POST /api/v1/webhook_endpoints/{id}/test`); never in the feed.' },
  ),
} as const;

export type EventType = keyof typeof EVENT_DATA;
export type EventData<T extends EventType> = Static<(typeof EVENT_DATA)[T]>;
export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[];
/** The types that appear in the feed (ping is for test deliveries only). */
export const FEED_EVENT_TYPES = EVENT_TYPES.filter((t) => t !== 'ping');

export const EventTypeName = Type.Union(
  EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: 'Event type.' },
);

/** A document event's emission: the team, the document and what changed. */
export type DocumentEventType = Exclude<EventType, 'webhook_endpoint.disabled' | 'ping'>;
