/**
 * Work a bench run must undo however it ends (bench/run.ts): e.g. the scale-out run's database,
 * created for the run. Run once, on success by the run itself, on an error or an interrupt
 * (Ctrl-C, SIGTERM) by run.ts, each given a few seconds.
 */
const cleanups = new Set<() => Promise<void>>();

/** Registers `undo`; the returned function runs it now (once) and unregisters it. */
export function onExit(undo: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | null = null;
  const once = () => (done ??= (cleanups.delete(once), undo()));
  cleanups.add(once);
  return once;
}

/** Runs every registered cleanup, waiting at most `timeoutMs` for them. */
export async function runCleanups(timeoutMs = 10_000): Promise<void> {
  const all = Promise.allSettled([...cleanups].map((undo) => undo()));
  await Promise.race([all, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
}
