/**
 * `invoicing serve` with several API processes (INVOICING_PROCESSES, src/cluster/): real
 * processes on a real database (SQLite file, or PostgreSQL with Redis when their URLs are set),
 * driven only through the environment, the port and signals. Connections are opened one per
 * request, so Linux's round-robin hands them to both API processes; which process answered is
 * read from the log lines' `pid`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { descendantPids } from '../../bench/processes.js';
import { freePort, processFixture, runCli, until, type ServiceProcess } from '../helpers/process.js';
import { simpleDoc } from '../modules/invoices/write-helpers.js';

// Real processes on a loaded 2-core machine: generous limits.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

const fixture = processFixture('invoicing-cluster-');
const { freshDatabaseUrl } = fixture;

// Ids of their own per run: with REDIS_URL the counters outlive the run.
const run = crypto.randomBytes(4).toString('hex');
const TEAM = `cluster-${run}`;
const KEY = `ak_cluster_${run}_roomy_000000000001`;
const KEY_BASE = 700_000 + crypto.randomInt(200_000);
const TIGHT_KEYS = [1, 2, 3].map((i) => ({ id: KEY_BASE + i, secret: `ak_cluster_${run}_tight_00000000000${i}` }));
/** The tight keys' per-minute limit. */
const KEY_PER_MIN = 6;
/** INVOICING_IP_RATE_PER_SEC of the main service. */
const IP_PER_SEC = 5;

function bootstrap(): string {
  const roomy = { per_sec: 100_000, per_min: 1_000_000, per_day: 10_000_000 };
  const file = path.join(fixture.dir, 'bootstrap.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      tariffs: {
        roomy: { max_api_keys: 10, key_rate: roomy, team_rate: roomy },
        tight: { max_api_keys: 10, key_rate: { per_sec: 100_000, per_min: KEY_PER_MIN, per_day: 1_000_000 }, team_rate: roomy },
      },
      teams: [
        {
          id: TEAM,
          name: 'Cluster',
          tariff: 'roomy',
          api_keys: [{ id: KEY_BASE, name: 'erp', secret: KEY }],
          organizations: [{ id: 'org-1', name: 'ООО «Ромашка»', inn: '7707083893' }],
        },
        { id: `${TEAM}-tight`, name: 'Tight', tariff: 'tight', api_keys: TIGHT_KEYS.map((k) => ({ ...k, name: `tight-${k.id}` })) },
      ],
    }),
  );
  return file;
}

function serve(env: Record<string, string>, options: { detached?: boolean } = {}): Promise<ServiceProcess> {
  return fixture.serve({ INVOICING_DATA_DIR: path.join(fixture.dir, 'data'), ...env }, undefined, options);
}

let addresses = 0;
const addressBase = crypto.randomInt(256);
/** A client address of its own (INVOICING_TRUST_PROXY=1 takes it from X-Forwarded-For). */
function nextAddress(): string {
  addresses += 1;
  return `10.${addressBase}.${(addresses >> 8) & 255}.${addresses & 255}`;
}


interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request on a connection of its own (so the primary hands it to the next API process). */
function request(port: number, method: string, url: string, options: { headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: url, agent: false, headers: options.headers ?? {} }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The service's JSON log lines (stdout also carries the demo key announcement). */
function logLines(service: ServiceProcess): Array<Record<string, any>> {
  return service.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>);
}

/** The pids whose "incoming request" lines match. */
function answeringPids(service: ServiceProcess, match: (line: Record<string, any>) => boolean): Set<number> {
  return new Set(logLines(service).filter((l) => l.msg === 'incoming request' && match(l)).map((l) => l.pid as number));
}

/** The API processes the primary `pid` runs (not, e.g., the esbuild service tsx starts). */
function apiProcessPids(pid: number): number[] {
  return descendantPids(pid).filter((child) => {
    try {
      return fs.readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').includes('--api-process');
    } catch {
      return false;
    }
  });
}

/** A process that still runs (a zombie waiting to be reaped does not). */
function runs(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** `name value` of an unlabelled or exactly labelled sample in a Prometheus exposition. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** Runs `batch` until its requests fell in one window of `windowMs` (at most five tries). */
async function inOneWindow<T>(windowMs: number, batch: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const started = Date.now();
    const result = await batch(attempt);
    if (Math.floor(started / windowMs) === Math.floor(Date.now() / windowMs)) return result;
  }
  throw new Error('five batches in a row straddled a window boundary');
}

describe('INVOICING_PROCESSES=2', () => {
  let service: ServiceProcess;
  const roomy = (address = nextAddress()) => ({ 'x-api-key': KEY, 'x-forwarded-for': address });

  beforeAll(async () => {
    service = await serve({
      DATABASE_URL: await freshDatabaseUrl(),
      INVOICING_PROCESSES: '2',
      INVOICING_BOOTSTRAP_FILE: bootstrap(),
      INVOICING_IP_RATE_PER_SEC: String(IP_PER_SEC),
      INVOICING_TRUST_PROXY: '1',
      LOG_LEVEL: 'info',
    });
    await service.waitUntilHealthy();
  });

  it('runs two API processes on one port, both answering, and /metrics on either shows the whole machine', async () => {
    const apiProcesses = apiProcessPids(service.child.pid!);
    expect(apiProcesses).toHaveLength(2);
    const address = nextAddress();
    for (let i = 0; i < 20; i++) expect((await request(service.port, 'GET', '/readyz', { headers: { 'x-forwarded-for': nextAddress() } })).status).toBe(200);
    const readers = await until('the log lines of the 20 reads', () => {
      const lines = logLines(service).filter((l) => l.msg === 'incoming request' && l.req?.url === '/readyz');
      return lines.length === 20 && lines;
    });
    expect(new Set(readers.map((l) => l.pid))).toEqual(new Set(apiProcesses));
    // Each line names its API process.
    expect(new Set(readers.map((l) => l.worker)).size).toBe(2);

    // Four scrapes on four connections: both processes answer some, each with every read counted.
    for (let i = 0; i < 4; i++) {
      const scrape = await request(service.port, 'GET', '/metrics', { headers: { 'x-forwarded-for': address } });
      expect(scrape.status).toBe(200);
      expect(sample(scrape.text, 'invoicing_http_requests_total{method="GET",route="/readyz",status="200"}')).toBe(20);
      expect(sample(scrape.text, 'invoicing_api_processes')).toBe(2);
      // The process metrics are summed over the processes (primary included): more than one process's worth.
      expect(sample(scrape.text, 'invoicing_process_resident_memory_bytes')).toBeGreaterThan(0);
    }
    const scrapers = await until('the scrapes in the log', () => {
      const pids = answeringPids(service, (l) => l.req?.url === '/metrics');
      return pids.size === 2 && pids;
    });
    expect(scrapers).toEqual(new Set(apiProcesses));
  });

  it("holds an IP's per-second limit exactly across the processes", async () => {
    const { statuses, address } = await inOneWindow(1_000, async () => {
      const address = nextAddress();
      const answers = await Promise.all(Array.from({ length: 12 }, () => request(service.port, 'GET', '/healthz', { headers: { 'x-forwarded-for': address } })));
      return { statuses: answers.map((a) => [a.status, a.status === 429 ? (JSON.parse(a.text) as { code: string }).code : 'ok']), address };
    });
    expect(statuses.filter(([s]) => s === 200)).toHaveLength(IP_PER_SEC);
    expect(statuses.filter(([s, code]) => s === 429 && code === 'ip_per_sec')).toHaveLength(12 - IP_PER_SEC);
    expect(await until('both processes in the log', () => answeringPids(service, (l) => l.req?.remoteAddress === address).size === 2)).toBe(true);
  });

  it("holds a key's per-minute limit exactly across the processes", async () => {
    const { statuses, keyId } = await inOneWindow(60_000, async (attempt) => {
      const key = TIGHT_KEYS[attempt % TIGHT_KEYS.length]!;
      const answers = await Promise.all(
        Array.from({ length: 15 }, () => request(service.port, 'GET', '/api/v1/ref/catalog', { headers: { 'x-api-key': key.secret, 'x-forwarded-for': nextAddress() } })),
      );
      return { statuses: answers.map((a) => [a.status, a.status === 429 ? (JSON.parse(a.text) as { code: string }).code : 'ok']), keyId: key.id };
    });
    expect(statuses.filter(([s]) => s === 200), `key ${keyId}`).toHaveLength(KEY_PER_MIN);
    expect(statuses.filter(([s, code]) => s === 429 && code === 'key_per_min')).toHaveLength(15 - KEY_PER_MIN);
  });

  it('stores concurrent creates from many connections, every one answered 200 and readable', async () => {
    const created: Array<{ number: string; publicId: string }> = [];
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: 24 }, async (_, c) => {
        for (let i = 0; i < 4; i++) {
          const number = `C-${c}-${i}`;
          const res = await request(service.port, 'POST', '/api/v1/invoices', {
            headers: { ...roomy(), 'content-type': 'application/json' },
            body: JSON.stringify({ invoice: simpleDoc(number) }),
          });
          if (res.status === 200) created.push({ number, publicId: (JSON.parse(res.text) as { public_id: string }).public_id });
          else failures.push(`${number}: ${res.status} ${res.text}`);
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(created).toHaveLength(96);
    for (const doc of created) {
      const res = await request(service.port, 'GET', `/api/v1/invoices/${doc.publicId}`, { headers: roomy() });
      expect(res.status, doc.number).toBe(200);
      expect((JSON.parse(res.text) as { invoice: { number: string } }).invoice.number).toBe(doc.number);
    }
    const writers = answeringPids(service, (l) => l.req?.method === 'POST');
    expect(writers.size).toBe(2);
  });

  it('replaces an API process that dies, and keeps answering meanwhile', async () => {
    const before = apiProcessPids(service.child.pid!);
    expect(before).toHaveLength(2);
    const [victim, survivor] = before as [number, number];
    process.kill(victim, 'SIGKILL');
    await until('the primary noticing', () => service.stdout.includes('API process ended unexpectedly'));
    // Meanwhile the other process answers everything.
    for (let i = 0; i < 6; i++) expect((await request(service.port, 'GET', '/api/v1/ref/catalog', { headers: roomy() })).status).toBe(200);
    const after = await until(
      'a replacement',
      () => {
        const pids = apiProcessPids(service.child.pid!);
        return pids.length === 2 && !pids.includes(victim) && pids;
      },
      60_000,
    );
    expect(after).toContain(survivor);
    const replacement = after.find((pid) => pid !== survivor)!;
    // The replacement serves: requests on new connections reach it.
    await until('the replacement answering', async () => {
      await request(service.port, 'GET', '/readyz', { headers: { 'x-forwarded-for': nextAddress() } });
      return answeringPids(service, () => true).has(replacement);
    });
    const scrape = await request(service.port, 'GET', '/metrics', { headers: { 'x-forwarded-for': nextAddress() } });
    expect(sample(scrape.text, 'invoicing_api_process_restarts_total')).toBe(1);
    expect(sample(scrape.text, 'invoicing_api_processes')).toBe(2);
  });

  it('on SIGTERM lets both processes answer their in-flight requests, then exits 0', async () => {
    // Four creates whose bodies have not all arrived: in flight when the signal comes.
    const body = JSON.stringify({ invoice: simpleDoc('T-1') });
    const inFlight = Array.from({ length: 4 }, () => {
      const address = nextAddress();
      const socket = net.connect(service.port, '127.0.0.1');
      let data = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (data += chunk));
      const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(data)));
      socket.write(
        `POST /api/v1/invoices HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${KEY}\r\nx-forwarded-for: ${address}\r\n` +
          `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
      );
      return { address, socket, closed };
    });
    const holders = await until('the four requests under way in both processes', () => {
      const pids = answeringPids(service, (l) => inFlight.some((r) => r.address === l.req?.remoteAddress));
      return logLines(service).filter((l) => l.msg === 'incoming request' && inFlight.some((r) => r.address === l.req?.remoteAddress)).length === 4 && pids;
    });
    expect(holders.size).toBe(2);

    service.child.kill('SIGTERM');
    await until('both processes shutting down', () => logLines(service).filter((l) => l.msg === 'shutting down: finishing in-flight requests').length === 2);
    // The rest of the bodies (written, not ended: a client that half-closes gets no answer).
    for (const r of inFlight) r.socket.write(body.slice(10));
    for (const r of inFlight) {
      const answer = await r.closed;
      expect(answer, service.stdout.slice(-5000)).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toContain('"ok":true');
    }
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(service.stderr).toBe('');
  });
});

describe('INVOICING_PROCESSES=2 on an empty database', () => {
  it('prints the demo key once; Ctrl-C (SIGINT to the process group) stops every process with 0', async () => {
    const service = await serve({ DATABASE_URL: await freshDatabaseUrl(), INVOICING_PROCESSES: '2' }, { detached: true });
    await service.waitUntilHealthy();
    // The first answer comes after every process listens and the key is printed.
    expect(service.stdout.split('A demo team was created').length - 1).toBe(1);
    const keys = new Set(service.stdout.match(/\bak_[A-Za-z0-9_-]{20,}/g));
    expect(keys.size).toBe(1);
    const [key] = [...keys] as [string];
    expect((await request(service.port, 'GET', '/api/v1/ref/catalog', { headers: { 'x-api-key': key } })).status).toBe(200);

    const apiProcesses = apiProcessPids(service.child.pid!);
    expect(apiProcesses).toHaveLength(2);
    // Every process of the group gets the signal, as from a terminal: one signal, not two.
    process.kill(-service.child.pid!, 'SIGINT');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(service.stderr).toBe('');
    expect(apiProcesses.filter(runs)).toEqual([]);
  });

  it('ends the API processes within seconds when the primary is killed with -9', async () => {
    const service = await serve({ DATABASE_URL: await freshDatabaseUrl(), INVOICING_PROCESSES: '2' });
    await service.waitUntilHealthy();
    const apiProcesses = apiProcessPids(service.child.pid!);
    expect(apiProcesses).toHaveLength(2);
    // `exited` waits for the output pipes, which the API processes share: they are gone too.
    expect(await service.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    await until('the API processes gone', () => apiProcesses.every((pid) => !runs(pid)), 20_000);
  });
});

describe('start-up with INVOICING_PROCESSES', () => {
  it('reports a port already in use in one line, once, after the demo key, and exits 1', async () => {
    const port = await freePort();
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const result = await runCli(['serve'], { DATABASE_URL: await freshDatabaseUrl(), PORT: String(port), INVOICING_PROCESSES: '2' });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining(`Cannot listen on 127.0.0.1:${port} (HOST, PORT)`)]);
      expect(new Set(result.stdout.match(/\bak_[A-Za-z0-9_-]{20,}/g)).size).toBe(1);
      expect(result.stdout.split('A demo team was created').length - 1).toBe(1);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('refuses a bad value in one line naming the variable', async () => {
    for (const bad of ['0', 'many', '65']) {
      const result = await runCli(['serve'], { DATABASE_URL: `sqlite:${path.join(fixture.dir, 'refused.sqlite')}`, INVOICING_PROCESSES: bad });
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining('Invalid configuration: INVOICING_PROCESSES must be auto or an integer from 1 to 64')]);
    }
  });

  it('runs one process, forking none, with INVOICING_PROCESSES=1', async () => {
    const service = await serve({ DATABASE_URL: await freshDatabaseUrl(), INVOICING_PROCESSES: '1' });
    await service.waitUntilHealthy();
    expect(apiProcessPids(service.child.pid!)).toEqual([]);
    // Nothing else of ours either (tsx, which runs the tests' processes, may start esbuild).
    expect(descendantPids(service.child.pid!).filter((pid) => !fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('esbuild'))).toEqual([]);
    expect(service.stdout).not.toContain('"worker"');
    expect(await service.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
