/**
 * The share and portal pages: the module's second entry point, for the application and the
 * CLI. `index.ts` stays the leaf that the invoices and notifications modules import to build
 * links; the pages depend on the invoices module, so exporting them from there would close a
 * cycle (invoices → sharing → invoices).
 */
export { sharingRoutes, PAGE_CSP } from './sharing.routes.js';
export { SharingService, PageError, PORTAL_ACTOR, type SharingServiceDeps } from './sharing.service.js';
