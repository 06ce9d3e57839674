/**
 * The bench's child processes and what it reads of them: free ports, starting a process with its
 * output in a log file, waiting until it answers, stopping every one, and its CPU time and RSS
 * from /proc. Shared by the single-node run (run.ts) and the two-node topology (scale-out.ts).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/bench/*.js or bench/*.ts: the repository is two levels or one level up. */
const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = fs.existsSync(path.join(HERE, '..', 'package.json')) ? path.resolve(HERE, '..') : path.resolve(HERE, '../..');
export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');

/** Every process the bench started, so one signal handler can end them all. */
const children: ChildProcess[] = [];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `command` in the repository with stdout and stderr appended to `logFile`. */
export function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): ChildProcess {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  children.push(child);
  return child;
}

/** SIGTERM to every process still running, SIGKILL after 10 s. */
export async function stopProcesses(): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

/** SIGKILL to every process (the bench itself is being interrupted). */
export function killProcesses(): void {
  for (const child of children) child.kill('SIGKILL');
}

/** Polls `url` until it answers 2xx; fails with the log when the process exits or time runs out. */
export async function waitForHealthy(url: string, child: ChildProcess, logFile: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url} exited with ${child.exitCode}:\n${fs.readFileSync(logFile, 'utf8')}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s:\n${fs.readFileSync(logFile, 'utf8')}`);
}

/**
 * The processes a process started, and theirs, from /proc (the `children` file of each of its threads):
 * the API processes of `invoicing serve` with several (INVOICING_PROCESSES). Linux only; empty
 * where there is no such process.
 */
export function descendantPids(pid: number): number[] {
  const found: number[] = [];
  const visit = (parent: number) => {
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = fs.readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        // Bounded: a process tree of the service is a handful of processes.
        if (found.length < 1_000 && !found.includes(child)) {
          found.push(child);
          visit(child);
        }
      }
    }
  };
  visit(pid);
  return found;
}

/** The process and every process it started: what the bench measures of a service. */
export function processTree(pid: number): number[] {
  return [pid, ...descendantPids(pid)];
}

/** Sends `signal` to a process and every process it started. */
export function signalTree(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  for (const target of processTree(pid)) {
    try {
      process.kill(target, signal);
    } catch {
      // gone meanwhile
    }
  }
}

/** Fields of /proc/<pid>/status in kB, or null where there is no such process. */
function statusKb(pid: number, fields: readonly string[]): number[] | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const values = fields.map((field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN));
    return Number.isFinite(values[0]) ? values : null;
  } catch {
    return null;
  }
}

/**
 * The resident set size in MB of a process and every process it started (a service of several
 * API processes: the primary and all of them), from /proc (null where there is no such process).
 * Summed, so pages the processes share (code, libraries) count once per process.
 */
export function rssMb(pid: number | undefined): number | null {
  return residentMb(pid)?.rss ?? null;
}

/**
 * The resident memory of a process and every process it started, split as the kernel counts it,
 * in MB, from /proc: `anon` is the heap, native allocations and stacks; `file` is mapped files
 * (code, shared libraries, and any database file the process maps). Null where there is no such
 * process.
 */
export function residentMb(pid: number | undefined): { rss: number; anon: number; file: number } | null {
  if (pid === undefined) return null;
  const root = statusKb(pid, ['VmRSS', 'RssAnon', 'RssFile']);
  if (root === null) return null;
  const sum = [...root];
  for (const child of descendantPids(pid)) {
    const values = statusKb(child, ['VmRSS', 'RssAnon', 'RssFile']);
    values?.forEach((v, i) => (sum[i] = (sum[i] ?? 0) + v));
  }
  const [rss, anon, file] = sum.map((kb) => Math.round(kb / 1024)) as [number, number, number];
  return { rss, anon, file };
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const CLK_TCK = 100;

/** utime + stime + cutime + cstime of one process, in ticks (null where there is none). */
function cpuTicks(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/**
 * CPU time in ms (user + system, all threads) of a process and every process it started (a
 * service of several API processes: the primary and all of them), and of those that ended and
 * were waited for (a replaced API process), from /proc. Null where there is no such process.
 */
export function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  const root = cpuTicks(pid);
  if (root === null) return null;
  let ticks = root;
  for (const child of descendantPids(pid)) ticks += cpuTicks(child) ?? 0;
  return (ticks * 1000) / CLK_TCK;
}

/** The commit the bench measures (null outside a git checkout). */
export function gitCommit(root: string = REPO_ROOT): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}
