/**
 * The summary of a bench run of several rounds (bench/summary.ts): ratios are taken within a
 * round, then their median and range are reported.
 */
import { describe, expect, it } from 'vitest';
import { spread, summarize, summaryMarkdown, type RoundRow } from '../../bench/summary.js';

const row = (scenario: string, round: number, rps: number, cpu: number | null, base: number): RoundRow => ({
  scenario,
  round,
  requests_per_sec: rps,
  cpu_ms_per_request: cpu,
  ratio_to_baseline: rps / base,
});

describe('bench summary', () => {
  it('gives the median (the middle two averaged for an even count), minimum and maximum', () => {
    expect(spread([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3 });
    expect(spread([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4 });
    expect(spread([])).toBeNull();
  });

  it('takes each ratio within its round before the median, so a slow round moves both sides together', () => {
    // Round 2 is half as fast throughout: within each round e-mail is 0.9 of create.
    const baselines = [20_000, 10_000, 20_000];
    const rows: RoundRow[] = [];
    for (const [i, base] of baselines.entries()) {
      const round = i + 1;
      const factor = base / 20_000;
      rows.push(row('baseline', round, base, null, base));
      rows.push(row('invoice-create', round, 2000 * factor, 0.7 / factor, base));
      rows.push(row('invoice-create-email', round, 1800 * factor, 0.77 / factor, base));
    }
    const summary = summarize(rows, 'invoice-create');
    const email = summary.find((s) => s.scenario === 'invoice-create-email');
    expect(email?.rounds).toBe(3);
    expect(email?.ratio_to_reference?.median).toBeCloseTo(0.9, 10);
    expect(email?.ratio_to_reference?.min).toBeCloseTo(0.9, 10);
    expect(email?.ratio_to_reference?.max).toBeCloseTo(0.9, 10);
    expect(email?.cpu_ratio_to_reference?.median).toBeCloseTo(1.1, 10);
    expect(email?.ratio_to_baseline?.median).toBeCloseTo(0.09, 10);
    // Across rounds the raw figures spread: 900 to 1800 a second.
    expect(email?.requests_per_sec).toEqual({ median: 1800, min: 900, max: 1800 });
    const create = summary.find((s) => s.scenario === 'invoice-create');
    expect(create?.ratio_to_reference).toBeNull();
    const baseline = summary.find((s) => s.scenario === 'baseline');
    expect(baseline?.ratio_to_baseline).toBeNull();
    expect(baseline?.cpu_ms_per_request).toBeNull();
    const table = summaryMarkdown(summary, 3, 'invoice-create');
    expect(table).toContain('| invoice-create-email | 1800 (900–1800) | 0.77 (0.77–1.54) | 0.090 (0.090–0.090) | 0.90 (0.90–0.90) | 1.10 (1.10–1.10) |');
  });

  it('leaves out a round where the reference scenario did not run', () => {
    const rows = [row('baseline', 1, 10, null, 10), row('a', 1, 5, 1, 10), row('a', 2, 4, 1, 10), row('invoice-create', 2, 8, 0.5, 10)];
    const a = summarize(rows, 'invoice-create').find((s) => s.scenario === 'a');
    expect(a?.ratio_to_reference).toEqual({ median: 0.5, min: 0.5, max: 0.5 });
    expect(a?.cpu_ratio_to_reference).toEqual({ median: 2, min: 2, max: 2 });
  });
});
