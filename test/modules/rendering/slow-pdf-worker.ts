/**
 * The pool's task (src/modules/rendering/pdf-worker.ts) with a way to make a render run long:
 * a model whose number starts with `slow:` holds its thread that many milliseconds after the
 * render, as a render stuck in the layout would. For the pool's timeout test.
 */
import renderTask, { type RenderTask } from '../../../src/modules/rendering/pdf-worker.js';

export default async function slowRenderTask(task: RenderTask): Promise<Uint8Array> {
  const bytes = await renderTask(task);
  const slow = /^slow:(\d+)$/.exec(task.model.number);
  if (slow) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(slow[1]));
  return bytes;
}
