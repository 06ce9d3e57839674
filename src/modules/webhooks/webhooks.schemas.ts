/** Wire shapes of the webhook endpoints API. */
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../shared/schemas.js';
import { FEED_EVENT_TYPES } from '../events/index.js';

const EventSelector = Type.Union(
  ['*', ...FEED_EVENT_TYPES].map((t) => Type.Literal(t)),
  { description: 'An event type, or `*` for all of them.' },
);
const Events = Type.Array(EventSelector, { minItems: 1, maxItems: 20, description: 'Event types delivered to this endpoint; `["*"]` (the default) for all.' });
const Url = Type.String({ minLength: 1, maxLength: 2048, format: 'uri', description: 'Where deliveries are POSTed: https (http only when the operator allows it), resolving to public addresses.' });
/** Free text without control characters (tab and line breaks allowed). */
const TEXT = '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$';
const Description = Type.String({ maxLength: 500, pattern: TEXT, description: 'A note for people (what the endpoint is).' });
const Enabled = Type.Boolean({ description: 'False pauses deliveries to this endpoint.' });
export const EndpointId = Type.String({ minLength: 1, maxLength: 40, pattern: '^[A-Za-z0-9_-]+$', description: 'Endpoint id.' });

export const WebhookEndpoint = Type.Object(
  {
    id: EndpointId,
    url: Type.String({ maxLength: 2048, format: 'uri', description: 'Delivery URL.' }),
    events: Type.Array(EventSelector, { maxItems: 20, description: 'Event types delivered.' }),
    description: Description,
    enabled: Enabled,
    created_at: Type.String({ format: 'date-time', maxLength: 40, description: 'Creation time (UTC).' }),
    disabled_reason: Type.Union([Type.Literal('failing_for_3_days'), Type.Literal('secret_unreadable'), Type.Null()], {
      description:
        'Why the service disabled the endpoint, null otherwise: `failing_for_3_days` (every attempt failed for the 3-day retry window), `secret_unreadable` (the signing secret cannot be decrypted after the operator changed INVOICING_SECRET: rotate the secret, then re-enable).',
    }),
  },
  { $id: 'WebhookEndpoint', additionalProperties: false, description: 'A webhook endpoint of the team.' },
);

export const CreateEndpointBody = Type.Object(
  { url: Url, events: Type.Optional(Events), description: Type.Optional(Description), enabled: Type.Optional(Enabled) },
  { additionalProperties: false, description: 'A new endpoint.' },
);
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const PatchEndpointBody = Type.Object(
  { url: Type.Optional(Url), events: Type.Optional(Events), description: Type.Optional(Description), enabled: Type.Optional(Enabled) },
  { additionalProperties: false, description: 'Any of the four fields; absent ones stay.' },
);
export type PatchEndpointBody = Static<typeof PatchEndpointBody>;

const Secret = Type.String({ maxLength: 100, pattern: '^whsec_[A-Za-z0-9+/=]+$', description: 'The signing secret (`whsec_` + base64). Shown only in this response: keep it.' });
const Ok = Type.Literal(true, { description: 'Always true on success.' });

export const EndpointCreated = Type.Object(
  { ok: Ok, endpoint: ref(WebhookEndpoint), secret: Secret, demo_mode: Type.Optional(Type.Boolean({ description: 'True with the demo token: nothing was stored.' })) },
  { $id: 'WebhookEndpointCreated', additionalProperties: false, description: 'The endpoint and its signing secret (shown once).' },
);
export const EndpointResponse = Type.Object({ ok: Ok, endpoint: ref(WebhookEndpoint) }, { $id: 'WebhookEndpointResponse', additionalProperties: false, description: 'One endpoint.' });
export const EndpointList = Type.Object(
  { ok: Ok, items: Type.Array(ref(WebhookEndpoint), { maxItems: 1000, description: 'The team’s endpoints, oldest first.' }) },
  { $id: 'WebhookEndpointList', additionalProperties: false, description: 'The team’s endpoints.' },
);
export const OkResponse = Type.Object({ ok: Ok }, { $id: 'WebhookOk', additionalProperties: false, description: 'Done.' });

export const RotateBody = Type.Object(
  {
    overlap_sec: Type.Optional(
      Type.Integer({ format: 'int32', minimum: 0, maximum: 604_800, default: 86_400, description: 'How long the old secret stays valid (deliveries carry both signatures), 0–604800 s; default 86400.' }),
    ),
  },
  { additionalProperties: false, description: 'Rotation options.' },
);
export type RotateBody = Static<typeof RotateBody>;
export const RotateResponse = Type.Object({ ok: Ok, secret: Secret }, { $id: 'WebhookSecretRotated', additionalProperties: false, description: 'The new signing secret (shown once).' });

export const TestResponse = Type.Object(
  { ok: Ok, event_id: Type.String({ maxLength: 60, pattern: '^evt_[A-Za-z0-9_-]+$', description: 'The `webhook-id` of the ping delivery.' }) },
  { $id: 'WebhookTestQueued', additionalProperties: false, description: 'A `ping` delivery was queued.' },
);

export const ReplayBody = Type.Object(
  {
    event_ids: Type.Array(Type.String({ maxLength: 40, pattern: '^evt_[A-Za-z0-9_-]+$', description: 'An event id from the feed.' }), {
      minItems: 1,
      maxItems: 100,
      description: 'Events to send again (kept events of the team; others are skipped).',
    }),
  },
  { additionalProperties: false, description: 'Events to re-send.' },
);
export type ReplayBody = Static<typeof ReplayBody>;
export const ReplayResponse = Type.Object(
  { ok: Ok, queued: Type.Integer({ format: 'int32', minimum: 0, maximum: 100, description: 'Deliveries queued.' }) },
  { $id: 'WebhookReplayQueued', additionalProperties: false, description: 'Deliveries queued again.' },
);

export const DeliveriesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: 20, description: 'Attempts to return, 1–100 (default 20).' })),
});
export const DeliveryAttempt = Type.Object(
  {
    event_id: Type.String({ maxLength: 80, pattern: '^evt_[A-Za-z0-9_-]+$', description: 'The event (`webhook-id`).' }),
    attempt: Type.Integer({ format: 'int32', minimum: 1, maximum: 100000, description: 'Attempt number of this delivery (1 = first).' }),
    status_code: Type.Union([Type.Integer({ format: 'int32', minimum: 0, maximum: 999 }), Type.Null()], { description: 'HTTP status answered, null when none (timeout, refused).' }),
    duration_ms: Type.Integer({ format: 'int32', minimum: 0, maximum: 3_600_000, description: 'Time the attempt took.' }),
    error: Type.Union([Type.String({ maxLength: 500, pattern: TEXT }), Type.Null()], { description: 'Why it failed, null on success.' }),
    at: Type.String({ format: 'date-time', maxLength: 40, description: 'When the attempt was made.' }),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time', maxLength: 40 }), Type.Null()], { description: 'When the next retry is due, null when none.' }),
  },
  { additionalProperties: false, description: 'One delivery attempt.' },
);
export const DeliveryList = Type.Object(
  { ok: Ok, items: Type.Array(DeliveryAttempt, { maxItems: 100, description: 'Attempts, newest first.' }) },
  { $id: 'WebhookDeliveryList', additionalProperties: false, description: 'Delivery attempts of an endpoint.' },
);

export const EndpointParams = Type.Object({ id: EndpointId });
