/**
 * Links of a document (used by the invoices and notifications modules) and their revocation.
 * The pages themselves are exported from `web.ts`.
 */
export * from './links.js';
export * from './portal-token.js';
export { rotateShareLinks, type RotatedLinks } from '../invoices/share-link-rotation.js';
