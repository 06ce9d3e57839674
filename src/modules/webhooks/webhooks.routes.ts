/** Webhook endpoints API (contract 5): parse → service → reply. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../teams/index.js';
import { API_SECURITY, API_WRITE_SECURITY } from '../../shared/api-security.js';
import { errorResponses, ref } from '../../shared/schemas.js';
import { MAX_UNDELIVERED, type WebhooksService } from './webhooks.service.js';
import {
  CreateEndpointBody,
  DeliveriesQuery,
  DeliveryList,
  EndpointCreated,
  EndpointList,
  EndpointParams,
  EndpointResponse,
  OkResponse,
  PatchEndpointBody,
  ReplayBody,
  ReplayResponse,
  RotateBody,
  RotateResponse,
  TestResponse,
  WebhookEndpoint,
} from './webhooks.schemas.js';

const DEMO = ' With the demo token this is a dry-run: nothing is stored (no endpoint exists, so calls on one are 404).';
const BACKLOG = ` An endpoint holds at most ${MAX_UNDELIVERED} deliveries still to make (pending or being attempted): past that, 409 webhook_backlog_full, nothing queued.`;
const tags = ['webhooks'];

export const webhookRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  for (const s of [WebhookEndpoint, EndpointCreated, EndpointResponse, EndpointList, OkResponse, RotateResponse, TestResponse, ReplayResponse, DeliveryList]) {
    app.addSchema(s);
  }
  const base = '/api/v1/webhook_endpoints';

  app.post(
    base,
    {
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description: `Registers a URL to receive the team's events, signed per Standard Webhooks 1.0. The signing secret is in this response only. The URL must be https (http only when the operator allows it) and resolve to public addresses: otherwise 400 invalid_webhook_url with the reason. Beyond the tariff's max_webhook_endpoints (default 5): 403 webhook_endpoints_over_tariff_limit.${DEMO}`,
        tags,
        security: API_WRITE_SECURITY,
        body: CreateEndpointBody,
        response: { 201: ref(EndpointCreated, 'Created; the secret is shown only here.'), ...errorResponses(400, 401, 403, 429, 503) },
      },
    },
    async (request, reply) => reply.code(201).send(await webhooks.create(requireAuth(request), request.body)),
  );

  app.get(
    base,
    {
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints',
        description: 'The team’s webhook endpoints (secrets are never shown again).',
        tags,
        security: API_SECURITY,
        response: { 200: ref(EndpointList, 'The endpoints.'), ...errorResponses(401, 403, 429, 503) },
      },
    },
    async (request) => webhooks.list(requireAuth(request)),
  );

  app.get(
    `${base}/:id`,
    {
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Read a webhook endpoint',
        description: 'One endpoint; unknown or another team’s: 404 webhook_endpoint_not_found.',
        tags,
        security: API_SECURITY,
        params: EndpointParams,
        response: { 200: ref(EndpointResponse, 'The endpoint.'), ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => webhooks.get(requireAuth(request), request.params.id),
  );

  app.patch(
    `${base}/:id`,
    {
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Change a webhook endpoint',
        description: 'Changes any of url, events, description, enabled. Re-enabling resumes deliveries from now (the feed or replay covers the gap).',
        tags,
        security: API_WRITE_SECURITY,
        params: EndpointParams,
        body: PatchEndpointBody,
        response: { 200: ref(EndpointResponse, 'The endpoint as changed.'), ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => webhooks.update(requireAuth(request), request.params.id, request.body),
  );

  app.delete(
    `${base}/:id`,
    {
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint',
        description: 'Deletes the endpoint (nothing more is delivered to it) with its deliveries and their history.',
        tags,
        security: API_WRITE_SECURITY,
        params: EndpointParams,
        response: { 200: ref(OkResponse, 'Deleted.'), ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => webhooks.remove(requireAuth(request), request.params.id),
  );

  app.post(
    `${base}/:id/rotate_secret`,
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description: 'Issues a new secret (shown only here). Until `overlap_sec` (default 86400) has passed, deliveries carry a signature with each secret, so receivers can switch without losing a delivery.',
        tags,
        security: API_WRITE_SECURITY,
        params: EndpointParams,
        body: RotateBody,
        response: { 200: ref(RotateResponse, 'The new secret.'), ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => webhooks.rotateSecret(requireAuth(request), request.params.id, request.body?.overlap_sec ?? 86_400),
  );

  app.post(
    `${base}/:id/test`,
    {
      schema: {
        operationId: 'testWebhookEndpoint',
        summary: 'Send a test ping',
        description: `Queues a signed \`ping\` delivery (not in the feed); its attempts show in the deliveries list.${BACKLOG}`,
        tags,
        security: API_WRITE_SECURITY,
        params: EndpointParams,
        response: { 200: ref(TestResponse, 'Queued.'), ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    async (request) => webhooks.test(requireAuth(request), request.params.id),
  );

  app.post(
    `${base}/:id/replay`,
    {
      schema: {
        operationId: 'replayWebhookEvents',
        summary: 'Re-send events',
        description: `Queues the chosen events (kept events of the team, by id) for this endpoint again, with a fresh retry window, whatever its event types; unknown ids are skipped and not counted.${BACKLOG}`,
        tags,
        security: API_WRITE_SECURITY,
        params: EndpointParams,
        body: ReplayBody,
        response: { 200: ref(ReplayResponse, 'Queued.'), ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    async (request) => webhooks.replay(requireAuth(request), request.params.id, request.body.event_ids),
  );

  app.get(
    `${base}/:id/deliveries`,
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'List delivery attempts',
        description: 'Attempts to this endpoint, newest first: status code, duration, error and the next retry.',
        tags,
        security: API_SECURITY,
        params: EndpointParams,
        querystring: DeliveriesQuery,
        response: { 200: ref(DeliveryList, 'Attempts.'), ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => webhooks.deliveries(requireAuth(request), request.params.id, request.query.limit ?? 20),
  );
};
