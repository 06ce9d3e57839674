export * from './statuses.js';
export { invoiceRoutes } from './invoice.routes.js';
export { InvoiceService, type Editor, type RequestInfo, type WriteOutcome } from './invoice.service.js';
export { DEMO_SHARE_TOKENS } from './demo.js';
export { validateInvoice } from './validation.js';
export { listShareLinks } from './invoice.repository.js';
