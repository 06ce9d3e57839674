/**
 * A primary of src/cluster/ with three API processes that use nothing but what they share
 * through it (the SQLite write lock, the rate-limit counters), in one of the scenarios of
 * primary-link.test.ts. Each process appends what it did to the file named on the command line
 * (small O_APPEND writes: whole lines, in the order they happened).
 *
 *   node --import tsx test/cluster/cluster-fixture.ts SCENARIO FILE
 */
import cluster from 'node:cluster';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { connectToPrimary, startPrimary } from '../../src/cluster/index.js';
import { CONSUME_TIMEOUT_MS } from '../../src/cluster/rate-limits.js';

const [scenario, file] = process.argv.slice(2) as [string, string];
const note = (line: string) => fs.appendFileSync(file, `${line}\n`);
const seen = (needle: string) => fs.readFileSync(file, 'utf8').includes(needle);
const waitFor = async (needle: string) => {
  while (!seen(needle)) await sleep(20);
};

const rateLimits = scenario === 'count-while-busy';

if (cluster.isPrimary) {
  const primary = startPrimary({ processes: 3, logger: pino({ level: 'silent' }), rateLimits, writeLock: true });
  await primary.ready;
  note('ready');
} else {
  const link = connectToPrimary({ rateLimits, writeLock: true });
  const lock = link.writeLock!;
  const me = cluster.worker!.id;
  link.ready();
  // A replacement of a process that died (ids 4 and up) only serves.
  if (me <= 3) await play(me);
  setInterval(() => undefined, 60_000);

  async function play(id: number) {
    await waitFor('ready');
    if (scenario === 'count-while-busy') {
      if (id !== 1) return;
      // Twelve counts against a limit of five, and this process's event loop busy for longer than
      // a count may wait: before the counts are written to the channel (they wait for the end of
      // the turn), and after (the primary's replies come in meanwhile). Both times the primary
      // answers in time, and its answers must be taken.
      for (const when of ['before', 'after']) {
        const rule = { key: `ip:busy-${when}`, limit: 5, windowSec: 3_600, policy: 'ip', code: 'ip_per_hour' };
        const counts = Array.from({ length: 12 }, () => link.rateLimitStore!.consume([rule], Date.now()));
        if (when === 'after') await new Promise((resolve) => setImmediate(resolve));
        const busyUntil = Date.now() + CONSUME_TIMEOUT_MS + 300;
        while (Date.now() < busyUntil);
        const results = await Promise.allSettled(counts);
        for (const r of results) note(`${when} ${r.status === 'fulfilled' ? (r.value.allowed ? 'allowed' : 'refused') : `failed ${(r.reason as Error).name}`}`);
      }
      note('done 1');
    } else if (scenario === 'exclusive') {
      // Twenty turns each, with awaits inside: another process inside at the same time would interleave.
      for (let turn = 0; turn < 20; turn++) {
        await lock.acquire();
        note(`in ${id}`);
        await sleep(Math.random() * 3);
        note(`out ${id}`);
        lock.release();
      }
      note(`done ${id}`);
    } else if (scenario === 'dies-holding') {
      if (id === 1) {
        await lock.acquire();
        note('holding 1');
        process.exit(1);
      }
      await waitFor('holding 1');
      await lock.acquire();
      note(`granted ${id}`);
      lock.release();
    } else if (scenario === 'timeout') {
      if (id === 1) {
        await lock.acquire();
        note('holding 1');
        await waitFor('timed out 2');
        // Noted first: once released, process 2 may note its grant before this process runs again.
        note('released 1');
        lock.release();
      } else if (id === 2) {
        await waitFor('holding 1');
        await lock.acquire().then(
          () => note('granted 2 while 1 held it'),
          (err: Error) => note(`timed out 2: ${err.name} ${(err as Error & { code?: string }).code}`),
        );
        // The request that timed out was withdrawn: the next one is granted once 1 releases.
        await lock.acquire();
        note('granted 2');
        lock.release();
      }
    }
  }
}
