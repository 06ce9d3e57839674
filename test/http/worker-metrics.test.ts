/** `invoicing worker`'s optional metrics port: delivery counters in the Prometheus format, behind the metrics token when set. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer, type MetricsServer } from '../../src/http/metrics-server.js';
import { countDelivery } from '../../src/shared/delivery-metrics.js';

let open: MetricsServer;
let guarded: MetricsServer;

beforeAll(async () => {
  open = await startMetricsServer({ host: '127.0.0.1', port: 0, token: null });
  guarded = await startMetricsServer({ host: '127.0.0.1', port: 0, token: 'metrics-secret-token' });
});
afterAll(async () => {
  await open.close();
  await guarded.close();
});

describe('worker metrics port', () => {
  it('serves delivery outcomes by channel', async () => {
    countDelivery('email', 'sent');
    countDelivery('edo', 'pending');
    countDelivery('webhook', 'failed');
    const res = await fetch(`http://127.0.0.1:${open.port}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/invoicing_deliveries_total\{channel="email",outcome="sent"\} [1-9]/);
    expect(text).toMatch(/invoicing_deliveries_total\{channel="edo",outcome="retry"\} [1-9]/);
    expect(text).toMatch(/invoicing_deliveries_total\{channel="webhook",outcome="failed"\} [1-9]/);
    expect((await fetch(`http://127.0.0.1:${open.port}/other`)).status).toBe(404);
  });

  it('needs the bearer token when INVOICING_METRICS_TOKEN is set', async () => {
    expect((await fetch(`http://127.0.0.1:${guarded.port}/metrics`)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${guarded.port}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const ok = await fetch(`http://127.0.0.1:${guarded.port}/metrics`, { headers: { authorization: 'Bearer metrics-secret-token' } });
    expect(ok.status).toBe(200);
  });
});
