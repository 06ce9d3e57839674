import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { API_SECURITY } from '../../shared/api-security.js';
import { errorResponses, ref } from '../../shared/schemas.js';
import { requireAuth } from '../teams/index.js';
import { CatalogResponse } from './catalog.schemas.js';
import type { CatalogService } from './catalog.service.js';

export const catalogRoutes: FastifyPluginAsyncTypebox<{ catalog: CatalogService }> = async (app, { catalog }) => {
  app.addSchema(CatalogResponse);
  app.get(
    '/api/v1/ref/catalog',
    {
      schema: {
        operationId: 'getCatalog',
        summary: 'Reference catalog',
        description:
          "Organizations (with `within_tariff_limit`), bank accounts, managers and signers of the API key's team, and the enumerated values (currencies, directions, VAT rates, status values with Russian labels, units with OKEI codes). Only the caller's team, ever. With the demo token: a sample catalog.",
        tags: ['reference'],
        security: API_SECURITY,
        response: { 200: ref(CatalogResponse, 'The catalog of the team.'), ...errorResponses(401, 403, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      // Serialized by the route's own serializer (and kept while the team's data is unchanged).
      const json = await catalog.getCatalogJson(requireAuth(request), (body) => String(reply.serialize(body)));
      reply.header('content-type', 'application/json; charset=utf-8');
      return reply.send(json as unknown as CatalogResponse);
    },
  );
};
