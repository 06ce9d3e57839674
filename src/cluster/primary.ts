/**
 * The primary of `invoicing serve` with several API processes: forks them (node:cluster; they
 * all listen on PORT, and Linux hands the connections round-robin), answers their calls (rate
 * limits without Redis, the SQLite write lock, the machine's metrics), reports the first one's
 * start-up failure, replaces one that dies (with a back-off), and shuts them down gracefully.
 * It serves no HTTP itself.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { MemoryStore } from '../http/rate-limit/memory-store.js';
import { Batcher } from './batcher.js';
import { isOurs, LIMITS, type ToApiProcess, type ToPrimary } from './messages.js';
import { MachineMetrics } from './metrics.js';
import { answerConsume } from './rate-limits.js';
import { API_PROCESS_FLAG } from './role.js';
import { WriteLockQueue } from './write-lock.js';

export interface PrimaryOptions {
  /** API processes to run (INVOICING_PROCESSES). */
  processes: number;
  logger: Logger;
  /** No REDIS_URL: the primary keeps the rate-limit counters for all. */
  rateLimits: boolean;
  /** SQLite: the primary holds the write lock. */
  writeLock: boolean;
}

/** An API process failed to start: the line to print (as a single process would) and the exit status. */
export class StartupFailure extends Error {
  constructor(
    readonly line: string,
    readonly code: number,
  ) {
    super(line);
    this.name = 'StartupFailure';
  }
}

export interface Primary {
  /** Resolves when every API process listens; rejects with a StartupFailure when one cannot. */
  readonly ready: Promise<void>;
  /**
   * Lets the API processes answer the requests they hold (until now they only listen), and any
   * later replacement as soon as it listens.
   */
  open(): void;
  /**
   * Asks every API process to shut down as a single process does on SIGTERM; resolves, once all
   * have exited, with the primary's exit status (0 when every one exited with 0).
   */
  shutdown(): Promise<number>;
  /** Ends every API process at once (SIGKILL). */
  kill(): void;
}

/** Replacing API processes that exit unexpectedly: waits that grow with the exits of the last ten minutes. */
export class RestartBackoff {
  static readonly BASE_MS = 500;
  static readonly MAX_MS = 30_000;
  static readonly WINDOW_MS = 10 * 60_000;
  private exits: number[] = [];

  /** The wait before replacing a process that exited at `nowMs`: 0.5 s, 1 s, 2 s, … at most 30 s. */
  next(nowMs: number): number {
    this.exits = this.exits.filter((at) => at > nowMs - RestartBackoff.WINDOW_MS).slice(-63);
    this.exits.push(nowMs);
    return Math.min(RestartBackoff.MAX_MS, RestartBackoff.BASE_MS * 2 ** (this.exits.length - 1));
  }
}

interface Slot {
  worker: Worker | null;
  ready: boolean;
  /** What the process said when it could not start. */
  failure: StartupFailure | null;
  restart: NodeJS.Timeout | null;
}

function describeExit(code: number | null, signal: string | null): string {
  return signal ? `killed by ${signal}` : `exit status ${code}`;
}

export function startPrimary(options: PrimaryOptions): Primary {
  const { logger } = options;
  const limits = options.rateLimits ? new MemoryStore() : null;
  const lock = options.writeLock ? new WriteLockQueue() : null;
  const metrics = new MachineMetrics();
  const backoff = new RestartBackoff();
  const slots: Slot[] = Array.from({ length: options.processes }, () => ({ worker: null, ready: false, failure: null, restart: null }));
  let state: 'starting' | 'serving' | 'stopping' | 'failed' = 'starting';
  let exitStatus = 0;
  let settleReady!: { resolve(): void; reject(err: StartupFailure): void };
  const ready = new Promise<void>((resolve, reject) => (settleReady = { resolve, reject }));
  let stopped: (() => void) | null = null;
  let opened = false;

  cluster.setupPrimary({ args: [...process.argv.slice(2), API_PROCESS_FLAG] });

  const live = () => slots.flatMap((slot) => (slot.worker ? [slot.worker] : []));
  /** Each API process's messages of this turn, sent together. */
  const outboxes = new Map<number, Batcher<ToApiProcess>>();
  const send = (worker: Worker, message: ToApiProcess) => outboxes.get(worker.id)?.push(message);
  const countReady = () => metrics.processes.set(slots.filter((slot) => slot.ready).length);

  function failStartup(failure: StartupFailure): void {
    if (state !== 'starting') return;
    state = 'failed';
    settleReady.reject(failure);
  }

  function fork(slot: Slot): void {
    slot.restart = null;
    slot.ready = false;
    slot.failure = null;
    let worker: Worker;
    try {
      worker = cluster.fork();
    } catch (err) {
      // The system refused a process (EAGAIN, ENOMEM): at start a start-up failure, later another try.
      if (state === 'starting') failStartup(new StartupFailure(`Start-up failed: cannot start an API process: ${(err as Error).message}`, 1));
      else if (state === 'serving') retry(slot, { err }, 'cannot start a replacement API process');
      return;
    }
    slot.worker = worker;
    outboxes.set(
      worker.id,
      new Batcher<ToApiProcess>((batch) => {
        if (worker.isConnected()) worker.send(batch);
      }),
    );
    // A failed send to a process that is going away: its exit is handled below.
    worker.on('error', (err: Error) => logger.warn({ err, worker: worker.id }, 'IPC with an API process failed'));
    worker.on('message', (message: unknown) => {
      if (!isOurs<ToPrimary>(message)) return;
      if (message.kind !== 'invoicing:batch') receive(slot, worker, message);
      else if (Array.isArray(message.messages)) for (const one of message.messages.slice(0, LIMITS.batch)) receive(slot, worker, one);
    });
    // Gone when it has exited and its channel is closed: every message it sent has been read.
    let exit: { code: number | null; signal: string | null } | null = null;
    let disconnected = false;
    const goneIfBoth = () => {
      if (exit !== null && disconnected) gone(slot, worker, exit.code, exit.signal);
    };
    worker.once('exit', (code: number | null, signal: string | null) => {
      exit = { code, signal };
      // A dead process holds nothing: its lock and its part of a metrics collection go now.
      lock?.drop(worker.id);
      metrics.processGone(worker.id);
      goneIfBoth();
    });
    worker.once('disconnect', () => {
      disconnected = true;
      goneIfBoth();
    });
  }

  function receive(slot: Slot, worker: Worker, message: ToPrimary): void {
    if (worker.isDead()) return;
    switch (message.kind) {
      case 'invoicing:batch':
        return; // not nested
      case 'invoicing:call':
        return answer(worker, message.id, message.op, message.args);
      case 'invoicing:lock-release':
        return lock?.release(worker.id, message.id);
      case 'invoicing:lock-cancel':
        return lock?.cancel(worker.id, message.id);
      case 'invoicing:metrics':
        return metrics.receive(worker.id, message.id, message.metrics, message.error);
      case 'invoicing:ready':
        slot.ready = true;
        countReady();
        if (state === 'starting' && slots.every((s) => s.ready)) {
          state = 'serving';
          settleReady.resolve();
        } else if (state === 'serving') {
          if (opened) send(worker, { kind: 'invoicing:open' });
          logger.info({ worker: worker.id, worker_pid: worker.process.pid }, 'replacement API process serving');
        }
        return;
      case 'invoicing:startup-failed':
        slot.failure = new StartupFailure(String(message.line).slice(0, 2_000), Number.isInteger(message.code) ? message.code : 1);
        if (state === 'starting') failStartup(slot.failure);
        else logger.error({ worker: worker.id, error: slot.failure.line }, 'an API process could not start');
        return;
    }
  }

  function answer(worker: Worker, id: number, op: string, args: unknown): void {
    const reply = (value: unknown) => send(worker, { kind: 'invoicing:reply', id, value });
    const refuse = (err: unknown) => send(worker, { kind: 'invoicing:reply', id, error: (err as Error).message });
    try {
      if (op === 'consume' && limits) return reply(answerConsume(limits, args));
      if (op === 'lock' && lock) return lock.request({ process: worker.id, id, grant: () => reply(id) });
      if (op === 'metrics') {
        const targets = slots.flatMap(({ worker: w, ready: serving }) => (w && serving ? [{ id: w.id, send: (m: ToApiProcess) => send(w, m) }] : []));
        metrics.collect(targets).then(reply, refuse);
        return;
      }
      refuse(new Error(`the primary does not answer ${op} here`));
    } catch (err) {
      refuse(err);
    }
  }

  function gone(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    if (slot.worker !== worker) return;
    outboxes.delete(worker.id);
    slot.worker = null;
    slot.ready = false;
    countReady();
    if (state === 'stopping') {
      if (code !== 0) exitStatus = 1;
      if (live().length === 0) stopped?.();
      return;
    }
    if (state === 'starting') {
      failStartup(slot.failure ?? new StartupFailure(`Start-up failed: an API process ended (${describeExit(code, signal)}) before listening`, 1));
      return;
    }
    if (state !== 'serving') return;
    metrics.restarts.inc();
    retry(
      slot,
      { worker: worker.id, worker_pid: worker.process.pid, exit_code: code, signal },
      `API process ended unexpectedly (${describeExit(code, signal)}); starting a replacement`,
    );
  }

  /** Starts the slot's process again after the back-off's wait, and says so. */
  function retry(slot: Slot, fields: Record<string, unknown>, message: string): void {
    const delay = backoff.next(Date.now());
    logger.error({ ...fields, restart_in_ms: delay }, message);
    slot.restart = setTimeout(() => fork(slot), delay);
  }

  for (const slot of slots) fork(slot);

  return {
    ready,
    open() {
      opened = true;
      for (const slot of slots) if (slot.worker && slot.ready) send(slot.worker, { kind: 'invoicing:open' });
    },
    shutdown() {
      state = 'stopping';
      for (const slot of slots) {
        if (slot.restart) clearTimeout(slot.restart);
        slot.restart = null;
      }
      return new Promise<number>((resolve) => {
        stopped = () => resolve(exitStatus);
        if (live().length === 0) stopped();
        for (const worker of live()) send(worker, { kind: 'invoicing:shutdown' });
      });
    },
    kill() {
      for (const worker of live()) worker.process.kill('SIGKILL');
    },
  };
}
