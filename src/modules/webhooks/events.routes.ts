/** `GET /api/v1/events`: the team's events feed. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../../db/database.js';
import type { ReadThreads } from '../../db/read-threads.js';
import { requireAuth } from '../teams/index.js';
import { API_SECURITY } from '../../shared/api-security.js';
import { ApiError } from '../../shared/errors.js';
import { errorResponses, ref } from '../../shared/schemas.js';
import { Event, EventList, EventsQuery, FEED_EVENT_TYPES, readFeed, type EventStore } from '../events/index.js';

/**
 * `heavyReads` (SQLite): a `types` filter may walk many of the team's events before it finds a
 * page of a rare type, so such a read runs on the reading threads (src/db/read-threads.ts).
 */
export const eventRoutes: FastifyPluginAsyncTypebox<{ db: Db; events: EventStore; retentionDays: number; heavyReads?: ReadThreads | null }> = async (
  app,
  { db, events, retentionDays, heavyReads },
) => {
  app.addSchema(Event);
  app.addSchema(EventList);
  app.get(
    '/api/v1/events',
    {
      schema: {
        operationId: 'listEvents',
        summary: 'Read the events feed',
        description: `The team's events (every change an integrator cares about), oldest first, in a total order that never skips or reorders an event committed later: poll with \`after\` = the previous \`next_cursor\`. Events are kept ${retentionDays} days (INVOICING_EVENT_RETENTION_DAYS). The same events are pushed to webhook endpoints. With the demo token the feed is empty.`,
        tags: ['events'],
        security: API_SECURITY,
        querystring: EventsQuery,
        response: { 200: ref(EventList, 'A page of events.'), ...errorResponses(400, 401, 403, 429, 503) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const types = request.query.types?.split(',').filter((t) => t !== '');
      const unknown = types?.filter((t) => !(FEED_EVENT_TYPES as string[]).includes(t)) ?? [];
      if (unknown.length > 0) throw new ApiError('invalid_query', { details: `unknown event type(s): ${unknown.join(', ')}` });
      if (auth.mode === 'demo') return { ok: true as const, items: [], next_cursor: request.query.after || null, has_more: false };
      const query = { after: request.query.after, limit: request.query.limit, types };
      if (heavyReads && types !== undefined && types.length > 0) return heavyReads.forTeam(auth.teamId, (threads) => readFeed(events, threads, auth.teamId, query));
      return readFeed(events, db, auth.teamId, query);
    },
  );
};
