/**
 * The PDF renderer as a worker-thread task (pdf-pool.ts): the same pure function, so the
 * bytes are the same as rendered inline. It reports on `started` that the render has begun,
 * when the pool's timeout starts to count (a thread's own start is not the render's time).
 */
import type { MessagePort } from 'node:worker_threads';
import type { InvoicePrintModel } from '../invoices/index.js';
import { renderInvoicePdf } from './invoice-pdf.js';

export interface RenderTask {
  model: InvoicePrintModel;
  started: MessagePort;
}

export default async function renderTask(task: RenderTask): Promise<Uint8Array> {
  task.started.postMessage(null);
  task.started.close();
  return renderInvoicePdf(task.model);
}
