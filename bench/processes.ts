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

/** A process's resident set size in MB, from /proc (null where there is none). */
export function rssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/**
 * A process's resident memory split as the kernel counts it, in MB, from /proc: `anon` is the
 * heap, native allocations and stacks; `file` is mapped files (code, shared libraries, and any
 * database file the process maps). Null where there is no such process.
 */
export function residentMb(pid: number | undefined): { rss: number; anon: number; file: number } | null {
  if (pid === undefined) return null;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
    const [rss, anon, file] = [kb('VmRSS'), kb('RssAnon'), kb('RssFile')].map((v) => Math.round(v / 1024));
    return Number.isFinite(rss) ? { rss: rss as number, anon: anon as number, file: file as number } : null;
  } catch {
    return null;
  }
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const CLK_TCK = 100;

/** A process's CPU time (user + system, all threads) in ms, from /proc (null where there is none). */
export function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / CLK_TCK : null;
  } catch {
    return null;
  }
}

/** The commit the bench measures (null outside a git checkout). */
export function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}
