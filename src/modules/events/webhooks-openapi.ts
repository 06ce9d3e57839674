/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, describing the POST a
 * receiver gets (Standard Webhooks 1.0 headers, body `{type, timestamp, data}` with the
 * type's own `data` schema), generated from EVENT_DATA so it cannot drift from what is sent.
 */
import { Type } from '@sinclair/typebox';
import { EVENT_DATA, EVENT_TYPES } from './event-types.js';

const HEADERS = [
  { name: 'webhook-id', description: 'The event id: the same on every retry of this event (use it to deduplicate).', schema: { type: 'string', maxLength: 60, pattern: '^evt_[A-Za-z0-9_-]+$' } },
  { name: 'webhook-timestamp', description: 'Unix seconds when this attempt was signed.', schema: { type: 'string', maxLength: 12, pattern: '^[0-9]+$' } },
  {
    name: 'webhook-signature',
    description: 'Space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>` entries: one per valid secret (two during a rotation overlap).',
    schema: { type: 'string', maxLength: 400, pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
  },
];

function operationName(type: string): string {
  return `webhook${type.split(/[._]/).map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('')}`;
}

export function openApiWebhooks(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const type of EVENT_TYPES) {
    const data = EVENT_DATA[type];
    const body = Type.Object(
      {
        type: Type.Literal(type, { description: 'The event type.' }),
        timestamp: Type.String({ format: 'date-time', maxLength: 40, description: 'When the change happened (the event’s created_at).' }),
        data,
      },
      { additionalProperties: false, description: `Body of a \`${type}\` delivery.` },
    );
    out[type] = {
      post: {
        operationId: operationName(type),
        summary: `Event ${type}`,
        description: `${data.description ?? ''} Delivered to endpoints subscribed to \`${type}\` or \`*\`; verify the signature before trusting the body (docs/webhooks.md).`,
        tags: ['webhooks'],
        parameters: HEADERS.map((h) => ({ ...h, in: 'header', required: true })),
        requestBody: { required: true, content: { 'application/json': { schema: JSON.parse(JSON.stringify(body)) } } },
        responses: {
          '200': { description: 'Any 2xx ends the delivery; anything else, a timeout or a refused connection is retried for up to 3 days.' },
        },
        security: [],
      },
    };
  }
  return out;
}
