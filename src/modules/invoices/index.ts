export * from './statuses.js';
