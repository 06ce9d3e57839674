/** The event log: recorded inside the changes' transactions, read as a feed, pushed by webhooks. */
export { recordEvent, documentEventQuery, pgDocumentEventsInsert, pgDocumentEventsInsertUnnest, recordTeamEvent, readFeed, eventsAfter, cursorsWithNewEvents, latestPosition, findEvents, pruneEvents, toPublicEvent, eventIdOf, positionOf } from './events.js';
export type { PublicEvent, FeedPosition, FeedPage, DocumentEventInput } from './events.js';
export { EVENT_DATA, EVENT_TYPES, FEED_EVENT_TYPES, type EventType, type EventData, type DocumentEventType } from './event-types.js';
export { Event, EventList, EventsQuery } from './events.schemas.js';
export { openApiWebhooks } from './webhooks-openapi.js';
