/**
 * The real `invoicing` command in a child process, run from the repository so modules resolve,
 * configured only through its environment: the build (`node dist/src/cli/entry.js …`) when it is
 * at least as new as every source file (`npm ci` builds it), else the sources through tsx
 * (`node --import tsx src/cli/entry.ts …`), which costs each child about a second more CPU.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { descendantPids, freePort } from '../../bench/processes.js';
import { createEmptyDatabase } from './db.js';

/** A port that was free a moment ago (listen on 0, read it, close): the bench's own. */
export { freePort };

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Variables of the parent that must not leak into a child's configuration. */
const CONFIG_VARIABLES = /^(PORT|HOST|DATABASE_URL|SMTP_URL|LOG_LEVEL|INVOICING_.*)$/;

/** The parent's environment without service configuration (REDIS_URL is kept, as CI sets it), plus `env`. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !CONFIG_VARIABLES.test(name)));
  if (base.REDIS_URL) base.REDIS_URL = redisOfThisTestWorker(base.REDIS_URL);
  return { ...base, LOG_LEVEL: 'warn', ...env };
}

/**
 * REDIS_URL with a Redis database of the vitest worker's own (VITEST_POOL_ID, 1 to 15) unless it
 * names one: the services of test files running at the same time would otherwise share their
 * rate-limit counters, the per-IP counter of 127.0.0.1 above all, and one file's load (thousands
 * of requests a second, under a high INVOICING_IP_RATE_PER_SEC) would refuse another file's
 * requests with 429.
 */
function redisOfThisTestWorker(url: string): string {
  const pool = Number(process.env.VITEST_POOL_ID);
  const parsed = new URL(url);
  if (!Number.isInteger(pool) || pool < 1 || (parsed.pathname !== '' && parsed.pathname !== '/')) return url;
  parsed.pathname = `/${((pool - 1) % 15) + 1}`;
  return parsed.toString();
}


export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let fresh: boolean | undefined;

/** Whether `dist/` was built after the last change to `src/` (its build info is newer than every source file). */
function buildIsFresh(): boolean {
  if (fresh !== undefined) return fresh;
  const built = (file: string) => (fs.existsSync(file) ? fs.statSync(file).mtimeMs : -1);
  const info = built(path.join(REPO_ROOT, 'dist/.tsbuildinfo'));
  let newest = 0;
  for (const entry of fs.readdirSync(path.join(REPO_ROOT, 'src'), { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  fresh = info >= newest && built(path.join(REPO_ROOT, 'dist/src/cli/entry.js')) > 0;
  return fresh;
}

/** `node` arguments that run `invoicing ARGS`: the build when fresh, else the sources (see the top). */
export function invoicingArgs(args: string[]): string[] {
  if (buildIsFresh()) return [path.join(REPO_ROOT, 'dist/src/cli/entry.js'), ...args];
  return ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/entry.ts'), ...args];
}

/** Runs `invoicing ARGS` to completion. */
export async function runCli(args: string[], env: Record<string, string>, timeoutMs = 80_000): Promise<CliResult> {
  const child = spawn(process.execPath, invoicingArgs(args), { cwd: REPO_ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])),
  );
  clearTimeout(timer);
  return { code, signal, stdout, stderr };
}

/** A running `invoicing serve`. */
export class ServiceProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) =>
      child.on('close', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      }),
    );
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.exitInfo === null;
  }

  /** Resolves once /healthz answers 200; rejects if the process exits or the time runs out. */
  async waitUntilHealthy(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) {
        throw new Error(`the service exited (${JSON.stringify(this.exitInfo)}) before it was healthy:\n${this.stderr}${this.stdout}`);
      }
      try {
        const res = await fetch(`${this.baseUrl}/healthz`);
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the service was not healthy within ${timeoutMs} ms:\n${this.stderr}${this.stdout}`);
  }

  /**
   * SIGKILL to the process and, at once, to every process it started: the whole service dies at
   * one instant, as in a power cut. (`stop('SIGKILL')` kills the primary alone; its API processes
   * then end as soon as they see it gone, answering what was already in flight.)
   */
  async killAll() {
    const started = this.child.pid === undefined ? [] : descendantPids(this.child.pid);
    const exit = this.stop('SIGKILL');
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    return exit;
  }

  /** Sends `signal` and waits for the exit; SIGKILL after `timeoutMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000) {
    if (this.running) this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const result = await this.exited;
    clearTimeout(timer);
    return result;
  }
}

/**
 * Starts `invoicing serve` on `port` (a free one by default). `detached`: in a process group of
 * its own, so a signal can go to the whole group, as Ctrl-C sends it (`process.kill(-pid)`).
 */
export async function startService(env: Record<string, string>, port?: number, options: { detached?: boolean } = {}): Promise<ServiceProcess> {
  const chosen = port ?? (await freePort());
  const child = spawn(process.execPath, invoicingArgs(['serve']), {
    cwd: REPO_ROOT,
    env: childEnv({ PORT: String(chosen), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  return new ServiceProcess(child, chosen);
}

/**
 * A test file's services, empty databases and temporary directory (`dir`, made before the file's
 * tests, removed after them with every service killed and every database dropped).
 */
export function processFixture(prefix: string) {
  const services: ServiceProcess[] = [];
  const drops: Array<() => Promise<void>> = [];
  let dir = '';
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop('SIGKILL')));
    for (const drop of drops) await drop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir(): string {
      return dir;
    },
    /** A new empty database (SQLite file, or PostgreSQL when DATABASE_URL names it): its URL. */
    async freshDatabaseUrl(): Promise<string> {
      const db = await createEmptyDatabase();
      drops.push(db.drop);
      return db.url;
    },
    /** `invoicing serve` with `env` (see startService). */
    async serve(env: Record<string, string>, port?: number, options: { detached?: boolean } = {}): Promise<ServiceProcess> {
      const service = await startService(env, port, options);
      services.push(service);
      return service;
    },
  };
}

/** Polls `probe` every 100 ms until it gives a value other than undefined or false; fails after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
