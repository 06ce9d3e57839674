export { catalogRoutes } from './catalog.routes.js';
export { CatalogService } from './catalog.service.js';
