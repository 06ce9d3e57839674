export * from './statuses.js';
export { invoiceRoutes } from './invoice.routes.js';
export { InvoiceService } from './invoice.service.js';
