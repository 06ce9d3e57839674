/**
 * deploy/prometheus/alerts.yml and deploy/grafana/invoicing.json (operating contract, section 8):
 * the rules pass `promtool check rules` and their unit tests (`promtool test rules`, Debian's
 * `prometheus` package, which .ci/run installs), and every metric the rules and the dashboard
 * query is one a running `invoicing serve` exports on /metrics, with samples.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { processFixture, REPO_ROOT, until, type ServiceProcess } from '../helpers/process.js';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const RULES = path.join(REPO_ROOT, 'deploy/prometheus/alerts.yml');
const RULE_TESTS = path.join(REPO_ROOT, 'deploy/prometheus/alerts.test.yml');
const DASHBOARD = path.join(REPO_ROOT, 'deploy/grafana/invoicing.json');
const KEY = 'ak_metrics_main_0001';

function promtool(args: string[]) {
  const result = spawnSync('promtool', args, { cwd: REPO_ROOT, encoding: 'utf8' });
  if (result.error) throw new Error(`promtool could not run (${result.error.message}): install Debian's prometheus package`);
  return result;
}

/** The `invoicing_…` metric names a PromQL expression reads. */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\binvoicing_[a-z0-9_]+/g)].map((m) => m[0]);
}

function alertExpressions(): Array<{ alert: string; expr: string }> {
  const doc = parseYaml(fs.readFileSync(RULES, 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
  return doc.groups.flatMap((g) => g.rules);
}

function dashboardExpressions(): string[] {
  const doc = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
  return doc.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

describe('Prometheus rules', () => {
  it('pass promtool check rules', () => {
    const result = promtool(['check', 'rules', RULES]);
    expect(result.stdout + result.stderr).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });

  it('pass their unit tests (promtool test rules)', () => {
    const result = promtool(['test', 'rules', RULE_TESTS]);
    expect(result.stdout + result.stderr).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });

  it('cover what should page someone, each with a severity and a runbook', () => {
    const rules = alertExpressions();
    expect(rules.map((r) => r.alert).sort()).toEqual(
      [
        'InvoicingDatabaseUnreachable',
        'InvoicingDeliveriesFailing',
        'InvoicingDeliveryBacklog',
        'InvoicingDown',
        'InvoicingHigh5xxRate',
        'InvoicingP99LatencyHigh',
        'InvoicingRedisUnreachable',
        'InvoicingSqliteDiskFull',
        'InvoicingSqliteDiskNearlyFull',
        'InvoicingWorkerNotRunning',
      ].sort(),
    );
    // Every rule is exercised by the unit tests.
    const tests = fs.readFileSync(RULE_TESTS, 'utf8');
    for (const { alert } of rules) expect(tests).toContain(`alertname: ${alert}`);
  });
});

describe('every metric queried is exported by a running service', () => {
  const fixture = processFixture('invoicing-metrics-');
  let service: ServiceProcess;
  let exported: Set<string>;

  beforeAll(async () => {
    const bootstrap = path.join(fixture.dir, 'bootstrap.json');
    fs.writeFileSync(
      bootstrap,
      JSON.stringify({
        teams: [
          {
            id: 'metrics-team',
            name: 'Metrics',
            api_keys: [{ id: 5151, name: 'main', secret: KEY, active: true }],
            organizations: [{ id: 'org-1', name: 'ООО «Ромашка»', inn: '7707083893', kpp: '773601001', active: true }],
          },
        ],
      }),
    );
    service = await fixture.serve({
      DATABASE_URL: await fixture.freshDatabaseUrl(),
      INVOICING_BOOTSTRAP_FILE: bootstrap,
      INVOICING_DATA_DIR: path.join(fixture.dir, 'data'),
      INVOICING_PROCESSES: '2',
    });
    await service.waitUntilHealthy();
    // A delivery (an e-mail written as an .eml file counts as sent) and a refusal (the demo
    // token's own rate): the labelled counters have samples only once something happened.
    const created = await fetch(`${service.baseUrl}/api/v1/invoices`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        invoice: {
          number: 'M-1',
          date: '2026-03-02',
          currency: 'RUB',
          seller: { inn: '7707083893' },
          buyer: { name: 'ООО «Покупатель»' },
          api_recipients: [{ email: 'buyer@buyer.example', name: 'Покупатель' }],
          items: [{ name: 'Работа', qty: 1, price: 1000, vat_pct: 22 }],
        },
        notify_recipients: true,
      }),
    });
    expect(created.status).toBe(200);
    await Promise.all(Array.from({ length: 8 }, () => fetch(`${service.baseUrl}/api/v1/ref/catalog`, { headers: { 'x-api-key': 'demo-token' } })));
    const scrape = async () => (await fetch(`${service.baseUrl}/metrics`)).text();
    const text = await until('a delivery and a refusal in /metrics', async () => {
      const body = await scrape();
      return /^invoicing_deliveries_total\{/m.test(body) && /^invoicing_rate_limit_refusals_total\{/m.test(body) && body;
    });
    // Sample lines only: a metric announced by # HELP / # TYPE without a value is not exported.
    exported = new Set(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => (/^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l) ?? [''])[0]));
  });

  it('the alerting rules', () => {
    const missing = alertExpressions().flatMap(({ alert, expr }) => metricNames(expr).filter((m) => !exported.has(m)).map((m) => `${alert}: ${m}`));
    expect(missing).toEqual([]);
  });

  it('the dashboard', () => {
    const expressions = dashboardExpressions();
    expect(expressions.length).toBeGreaterThan(10);
    const missing = expressions.flatMap((expr) => metricNames(expr).filter((m) => !exported.has(m)));
    expect(missing).toEqual([]);
    // Nothing but the service's own metrics: every selector names an invoicing_ metric.
    for (const expr of expressions) expect(metricNames(expr).length).toBeGreaterThan(0);
  });
});
