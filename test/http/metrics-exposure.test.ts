/**
 * `/metrics` is never open to the network by accident: on a HOST that is not loopback the
 * service (and `invoicing worker` with a metrics port) refuses to start without
 * INVOICING_METRICS_TOKEN, in one line naming it, unless INVOICING_METRICS_PUBLIC=true. On
 * loopback it is open as ever, and the CLI's other commands run whatever HOST says.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { checkMetricsExposure, isLoopbackHost } from '../../src/config/metrics-exposure.js';
import { freePort, processFixture, runCli } from '../helpers/process.js';

const fixture = processFixture('invoicing-metrics-');
const TOKEN = 'metrics-token-0123456789';
const ONE_LINE = /^Invalid configuration: INVOICING_METRICS_TOKEN is required when HOST \("0\.0\.0\.0"\) is not a loopback address: \/metrics would be open to every client; set it, or set INVOICING_METRICS_PUBLIC=true to serve \/metrics without a token$/;

describe('checkMetricsExposure', () => {
  it('lets loopback hosts serve /metrics without a token', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
      expect(() => checkMetricsExposure(loadConfig({ HOST: host })), host).not.toThrow();
    }
  });

  it('refuses any other host without the token, naming the variable, unless INVOICING_METRICS_PUBLIC=true', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.20', 'invoices.internal', '128.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
      let refused: unknown;
      try {
        checkMetricsExposure(loadConfig({ HOST: host }));
      } catch (err) {
        refused = err;
      }
      expect(refused, host).toBeInstanceOf(ConfigError);
      expect((refused as ConfigError).variable).toBe('INVOICING_METRICS_TOKEN');
      expect((refused as ConfigError).message).not.toContain('\n');
      expect(() => checkMetricsExposure(loadConfig({ HOST: host, INVOICING_METRICS_TOKEN: TOKEN })), host).not.toThrow();
      expect(() => checkMetricsExposure(loadConfig({ HOST: host, INVOICING_METRICS_PUBLIC: 'true' })), host).not.toThrow();
    }
    expect(() => loadConfig({ INVOICING_METRICS_PUBLIC: 'sometimes' })).toThrow(/^Invalid configuration: INVOICING_METRICS_PUBLIC must be true or false/);
  });
});

describe('start-up on HOST=0.0.0.0', () => {
  it('serve and worker (with a metrics port) refuse in one line naming INVOICING_METRICS_TOKEN; other commands run', async () => {
    const db = `sqlite:${path.join(fixture.dir, 'refused.sqlite')}`;
    const served = await runCli(['serve'], { DATABASE_URL: db, HOST: '0.0.0.0', INVOICING_PROCESSES: '1' });
    expect(served.code).toBe(2);
    expect(served.stderr.trim().split('\n')).toEqual([expect.stringMatching(ONE_LINE)]);
    const worker = await runCli(['worker'], { DATABASE_URL: db, HOST: '0.0.0.0', INVOICING_WORKER_METRICS_PORT: String(await freePort()) });
    expect(worker.code).toBe(2);
    expect(worker.stderr.trim().split('\n')).toEqual([expect.stringContaining('Invalid configuration: INVOICING_METRICS_TOKEN is required when HOST ("0.0.0.0")')]);
    const migrated = await runCli(['migrate'], { DATABASE_URL: db, HOST: '0.0.0.0' });
    expect(migrated.code).toBe(0);
  }, 120_000);

  it('serves /metrics without a token with INVOICING_METRICS_PUBLIC=true', async () => {
    const service = await fixture.serve({ DATABASE_URL: await fixture.freshDatabaseUrl(), HOST: '0.0.0.0', INVOICING_PROCESSES: '1', INVOICING_METRICS_PUBLIC: 'true' });
    await service.waitUntilHealthy();
    const res = await fetch(`http://127.0.0.1:${service.port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('invoicing_http_requests_total');
  }, 120_000);
});
