export * from './links.js';
export * from './portal-token.js';
