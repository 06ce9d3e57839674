/**
 * Links of a document: the URL builders (share, QR, portal, API) and the signed portal tokens.
 * A leaf: imports no other module. Share-link rotation (SQL on `share_links`) lives in invoices.
 */
export * from './links.js';
export * from './portal-token.js';
