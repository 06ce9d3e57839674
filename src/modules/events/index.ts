/** The event log: recorded inside the changes' transactions, read as a feed, pushed by webhooks. */
export { recordEvent, documentEventQuery, recordTeamEvent, readFeed, findEvents, pruneEvents, toPublicEvent, eventIdOf, positionOf } from './events.js';
export type { PublicEvent, FeedPage } from './events.js';
export type { DocumentEventInput } from './event-rows.js';
export type { EventStore, FeedPosition, NewEvent } from './store/index.js';
export { createSqliteEventStore } from './store/sqlite.js';
export { createPostgresEventStore } from './store/postgres.js';
// Only the invoices module's one-statement create and update use these; they go with that use.
export type { DocumentEventsInsert, PostgresEventStore } from './store/postgres.js';
export { EVENT_DATA, EVENT_TYPES, FEED_EVENT_TYPES, type EventType, type EventData, type DocumentEventType } from './event-types.js';
export { Event, EventList, EventsQuery } from './events.schemas.js';
export { openApiWebhooks } from './webhooks-openapi.js';
