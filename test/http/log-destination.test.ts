/**
 * The log destination holds no line in memory, under a read soak too: every line is on its
 * file descriptor when the logging call returns, however many lines one turn of the event loop
 * writes. pino's default asynchronous destination wrote at most 16 KB per turn and kept the rest
 * in the process, which grew without bound under sustained load.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { logDestination, loggerOptions } from '../../src/http/logging.js';

describe('log destination', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('has written every line by the time the logging call returns, with no turn of the event loop', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-destination-'));
    dirs.push(dir);
    const file = path.join(dir, 'service.log');
    const fd = fs.openSync(file, 'w');
    const logger = pino(loggerOptions('info'), logDestination(fd));
    const lines = 5_000;
    // ~1 MB in one synchronous burst: 60 times the 16 KB an asynchronous write takes per turn.
    for (let i = 0; i < lines; i++) {
      logger.info({ request_id: `req-${i}`, req: { method: 'GET', url: `/api/v1/invoices?limit=50&n=${i}` } }, 'incoming request');
    }
    const written = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    fs.closeSync(fd);
    expect(written).toHaveLength(lines);
    expect(JSON.parse(written[0] as string)).toMatchObject({ request_id: 'req-0', msg: 'incoming request' });
    expect(JSON.parse(written[lines - 1] as string)).toMatchObject({ request_id: `req-${lines - 1}` });
  });
});
