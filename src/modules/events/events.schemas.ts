/** Wire shapes of the events feed. */
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../shared/schemas.js';
import { FEED_EVENT_TYPES } from './event-types.js';

const EVENT_ID = '^evt_[0-9a-f]{32}$';

export const EventsQuery = Type.Object({
  after: Type.Optional(
    Type.String({
      maxLength: 40,
      pattern: '^(evt_[0-9a-f]{32})?$',
      description: 'Cursor: the `next_cursor` of the previous page (an event id). Without it the feed starts at the oldest event kept.',
    }),
  ),
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 200, default: 50, description: 'Page size, 1–200 (default 50).' })),
  types: Type.Optional(
    Type.String({
      maxLength: 400,
      pattern: '^[a-z_.,]*$',
      description: `Comma-separated event types to keep, e.g. \`invoice.viewed,edo.status_changed\`. Types: ${FEED_EVENT_TYPES.join(', ')}.`,
    }),
  ),
});
export type EventsQuery = Static<typeof EventsQuery>;

export const Event = Type.Object(
  {
    id: Type.String({ maxLength: 40, pattern: EVENT_ID, description: 'Unique id; ids sort in feed order. Also the `webhook-id` of its deliveries.' }),
    type: Type.Union(
      FEED_EVENT_TYPES.map((t) => Type.Literal(t)),
      { description: 'Event type (see the OpenAPI `webhooks` section for each one’s data).' },
    ),
    created_at: Type.String({ format: 'date-time', maxLength: 40, description: 'When the change happened (UTC).' }),
    data: Type.Object(
      {},
      { additionalProperties: true, description: 'What changed: `public_id` and `revision` for document events, and the type’s own fields.' },
    ),
  },
  { $id: 'Event', additionalProperties: false, description: 'One change, as the feed and webhook deliveries carry it.' },
);

export const EventList = Type.Object(
  {
    ok: Type.Literal(true, { description: 'Always true on success.' }),
    items: Type.Array(ref(Event), { maxItems: 200, description: 'Events in feed order, oldest first.' }),
    next_cursor: Type.Union([Type.String({ maxLength: 40, pattern: EVENT_ID }), Type.Null()], {
      description: 'Pass as `after` for the next page (the last item’s id; the given cursor when the page is empty; null on an empty feed).',
    }),
    has_more: Type.Boolean({ description: 'True when more events are ready now.' }),
  },
  { $id: 'EventList', additionalProperties: false, description: 'A page of the team’s events feed.' },
);
