/**
 * SQLite WAL checkpoints off the event loop (docs/performance.md, "Session 5: PUT on SQLite").
 *
 * By default SQLite checkpoints inside the COMMIT that takes the WAL past `wal_autocheckpoint`
 * pages (1,000): that COMMIT copies every page of the WAL into the database file and fsyncs it.
 * better-sqlite3 is synchronous, so the event loop, and every request of the node, waits for it:
 * a group commit of 50 updates then took tens of milliseconds instead of a few.
 *
 * Here a worker thread with its own connection to the same file runs
 * `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`. A passive checkpoint never blocks the
 * writer or a reader (it copies what no reader still needs and stops there); once it has copied
 * everything, the next write transaction starts the WAL file from its beginning again, so the
 * WAL stays small. The node's own connection keeps an automatic checkpoint only as a backstop
 * (`backstopPages`), should the thread fall behind or die. Durability is untouched: a commit is
 * acknowledged after its WAL frames are fsynced (`synchronous=FULL`), as before; a checkpoint
 * only moves committed pages into the main file (and fsyncs it).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

export interface WalCheckpointerOptions {
  /** How often the thread checkpoints (ms). */
  intervalMs?: number;
  /** The node's own automatic checkpoint, only past this many WAL pages. */
  backstopPages?: number;
}

export interface WalCheckpointStats {
  /** Checkpoints run, and those that found frames to copy. */
  runs: number;
  copied: number;
  /** Frames copied into the database file, in all. */
  frames: number;
  /** The longest checkpoint (ms), on the thread. */
  longestMs: number;
  /** Checkpoints that failed (e.g. SQLITE_BUSY while another process checkpointed). */
  failures: number;
}

export interface WalCheckpointer {
  stats(): Promise<WalCheckpointStats>;
  /** Stops the thread and closes its connection (before the node's own connection closes). */
  stop(): Promise<void>;
}

export const DEFAULT_CHECKPOINT_INTERVAL_MS = 100;
/** 16,000 pages of 4 KB: 64 MB of WAL before the node would checkpoint on its own. */
export const DEFAULT_BACKSTOP_PAGES = 16_000;

// CommonJS, evaluated in the thread: the module path is handed over, so it works from dist/ and
// from the TypeScript sources alike.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('synchronous = FULL');
const stats = { runs: 0, copied: 0, frames: 0, longestMs: 0, failures: 0 };
let stopped = false;
let lastLog = 0;
let lastCopied = 0;
function checkpoint() {
  if (stopped) return;
  const started = performance.now();
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    stats.runs++;
    const ms = performance.now() - started;
    if (ms > stats.longestMs) stats.longestMs = ms;
    // log: frames in the WAL now; checkpointed: frames of it copied so far. A WAL that started
    // again from its beginning since the last run has fewer frames than that run saw.
    if (row) {
      const before = row.log < lastLog ? 0 : lastCopied;
      if (row.checkpointed > before) {
        stats.copied++;
        stats.frames += row.checkpointed - before;
      }
      lastLog = row.log;
      lastCopied = row.checkpointed;
    }
  } catch {
    stats.failures++;
  }
}
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'stats') parentPort.postMessage({ stats });
  if (message === 'stop') {
    stopped = true;
    clearInterval(timer);
    db.close();
    parentPort.postMessage({ stopped: true });
    parentPort.close();
  }
});
`;

/**
 * Starts checkpointing `file` on a thread and lowers `sqlite`'s own automatic checkpoint to a
 * backstop. Only for a database file (not `:memory:`) in WAL mode.
 */
export function startWalCheckpointer(sqlite: SqliteDatabase.Database, file: string, options: WalCheckpointerOptions = {}): WalCheckpointer {
  const require = createRequire(import.meta.url);
  sqlite.pragma(`wal_autocheckpoint = ${Math.max(1, Math.floor(options.backstopPages ?? DEFAULT_BACKSTOP_PAGES))}`);
  const worker = new Worker(THREAD, {
    eval: true,
    workerData: { module: require.resolve('better-sqlite3'), file, intervalMs: options.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS },
  });
  // The process may exit while it runs; an error in it only leaves the backstop to checkpoint.
  worker.unref();
  let failed: Error | null = null;
  let exited = false;
  worker.on('error', (err) => {
    failed = err;
  });
  worker.once('exit', () => {
    exited = true;
  });
  const ask = <T>(message: string, key: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (failed || exited) return reject(failed ?? new Error('the WAL checkpoint thread has exited'));
      const onMessage = (reply: Record<string, unknown>) => {
        if (!(key in reply)) return;
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        resolve(reply[key] as T);
      };
      const onExit = () => {
        worker.off('message', onMessage);
        reject(failed ?? new Error('the WAL checkpoint thread has exited'));
      };
      worker.on('message', onMessage);
      worker.once('exit', onExit);
      worker.postMessage(message);
    });
  let stopping: Promise<void> | null = null;
  return {
    stats: () => ask<WalCheckpointStats>('stats', 'stats'),
    stop: () =>
      (stopping ??= (async () => {
        try {
          await ask<boolean>('stop', 'stopped');
        } catch {
          // Already gone: nothing to close.
        }
        await worker.terminate();
      })()),
  };
}
