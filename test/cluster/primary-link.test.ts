/**
 * What API processes share through the primary of src/cluster/ (cluster-fixture.ts): the SQLite
 * write lock (src/cluster/write-lock.ts) taken in turns, released when its holder dies, given up
 * by a request that waited too long; and the rate-limit counters (src/cluster/rate-limits.ts)
 * while an API process's event loop is busy.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { childEnv, REPO_ROOT, ServiceProcess } from '../helpers/process.js';

vi.setConfig({ testTimeout: 120_000 });

let tmp: string;
const processes: ServiceProcess[] = [];

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-lock-'));
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Runs a scenario until `done` holds of its lines; the lines. */
async function scenario(name: string, done: (lines: string[]) => boolean): Promise<string[]> {
  const file = path.join(tmp, `${name}.log`);
  fs.writeFileSync(file, '');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test/cluster/cluster-fixture.ts'), name, file], {
    cwd: REPO_ROOT,
    env: childEnv({}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const primary = new ServiceProcess(child, 0);
  processes.push(primary);
  const lines = () => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const deadline = Date.now() + 90_000;
  while (!done(lines())) {
    if (!primary.running) throw new Error(`the fixture exited: ${primary.stderr}`);
    if (Date.now() > deadline) throw new Error(`scenario ${name} did not finish: ${lines().join(' | ')}`);
    await sleep(50);
  }
  await primary.stop('SIGKILL');
  return lines();
}

describe('the write lock across processes', () => {
  it('lets one process in at a time', async () => {
    const lines = await scenario('exclusive', (l) => l.filter((x) => x.startsWith('done')).length === 3);
    const turns = lines.filter((l) => l.startsWith('in ') || l.startsWith('out '));
    expect(turns).toHaveLength(3 * 20 * 2);
    for (let i = 0; i < turns.length; i += 2) {
      expect(turns[i]).toMatch(/^in \d$/);
      expect(turns[i + 1]).toBe(turns[i]!.replace('in', 'out'));
    }
    // All three had turns.
    expect(new Set(turns.map((t) => t.split(' ')[1]))).toEqual(new Set(['1', '2', '3']));
  });

  it('is released when the process holding it dies', async () => {
    const lines = await scenario('dies-holding', (l) => l.includes('granted 2') && l.includes('granted 3'));
    expect(lines.indexOf('holding 1')).toBeLessThan(lines.indexOf('granted 2'));
  });

  it('fails an acquire that waits too long (as SQLITE_BUSY), and withdraws it', async () => {
    const lines = await scenario('timeout', (l) => l.includes('granted 2'));
    expect(lines).toContain('timed out 2: WriteLockTimeoutError SQLITE_BUSY');
    expect(lines).not.toContain('granted 2 while 1 held it');
    expect(lines.indexOf('released 1')).toBeLessThan(lines.indexOf('granted 2'));
  });
});

describe('the rate-limit counters through the primary', () => {
  it("takes the primary's answers that arrived while the API process was too busy to read them", async () => {
    const lines = await scenario('count-while-busy', (l) => l.includes('done 1'));
    // Not a timeout (which the limiter would serve uncounted): the primary had answered in time.
    for (const when of ['before', 'after']) {
      const results = lines.filter((l) => l.startsWith(`${when} `));
      expect(results.filter((l) => l === `${when} allowed`), results.join(', ')).toHaveLength(5);
      expect(results.filter((l) => l === `${when} refused`), results.join(', ')).toHaveLength(7);
    }
  });
});
