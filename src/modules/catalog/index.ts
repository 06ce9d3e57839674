export { catalogRoutes } from './catalog.routes.js';
export { CatalogService, organizationsWithinLimit } from './catalog.service.js';
