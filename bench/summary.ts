/**
 * The summary of a run of several rounds (BENCH_ROUNDS, bench/run.ts): per scenario the median
 * and range of its figures over the rounds. Ratios are taken within a round first (to that
 * round's baseline, to that round's reference scenario), so a machine that is slower in one
 * round than in the next moves both sides of a ratio together.
 */

/** What the summary reads of one measured scenario of one round. */
export interface RoundRow {
  scenario: string;
  /** 1-based round. */
  round: number;
  requests_per_sec: number;
  cpu_ms_per_request: number | null;
  ratio_to_baseline: number | null;
}

/** A scenario over the rounds of one run (BENCH_ROUNDS): the median and range of each figure. */
export interface SummaryRow {
  scenario: string;
  rounds: number;
  requests_per_sec: Spread;
  cpu_ms_per_request: Spread | null;
  ratio_to_baseline: Spread | null;
  /** req/s over the same round's BENCH_COMPARE_TO scenario's; null for that scenario and the baseline. */
  ratio_to_reference: Spread | null;
  /** CPU ms per request over the same round's reference's. */
  cpu_ratio_to_reference: Spread | null;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** Median (the mean of the middle two for an even count), minimum and maximum; null for no values. */
export function spread(values: number[]): Spread | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number };
}

/** Each scenario's figures over the rounds; ratios are taken within a round first. */
export function summarize(rows: ReadonlyArray<RoundRow>, reference: string): SummaryRow[] {
  const names = [...new Set(rows.map((r) => r.scenario))];
  return names.map((scenario) => {
    const mine = rows.filter((r) => r.scenario === scenario);
    const toReference: number[] = [];
    const cpuToReference: number[] = [];
    if (scenario !== reference && scenario !== 'baseline') {
      for (const row of mine) {
        const ref = rows.find((r) => r.scenario === reference && r.round === row.round);
        if (ref && ref.requests_per_sec > 0) toReference.push(row.requests_per_sec / ref.requests_per_sec);
        if (ref?.cpu_ms_per_request && row.cpu_ms_per_request !== null) cpuToReference.push(row.cpu_ms_per_request / ref.cpu_ms_per_request);
      }
    }
    const defined = (values: Array<number | null>) => values.filter((v): v is number => v !== null);
    return {
      scenario,
      rounds: mine.length,
      requests_per_sec: spread(mine.map((r) => r.requests_per_sec)) as Spread,
      cpu_ms_per_request: spread(defined(mine.map((r) => r.cpu_ms_per_request))),
      ratio_to_baseline: spread(defined(mine.map((r) => (r.scenario === 'baseline' ? null : r.ratio_to_baseline)))),
      ratio_to_reference: spread(toReference),
      cpu_ratio_to_reference: spread(cpuToReference),
    };
  });
}

export function summaryMarkdown(summary: SummaryRow[], rounds: number, reference: string): string {
  const show = (s: Spread | null, digits: number) =>
    s === null ? '–' : `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
  return [
    `Over ${rounds} rounds: median (min–max). Ratios are taken within each round (to that round's baseline, to that round's \`${reference}\`), then summarized.`,
    '',
    `| scenario | req/s | CPU ms/req | ratio to baseline | req/s ratio to ${reference} | CPU ratio to ${reference} |`,
    '|---|---:|---:|---:|---:|---:|',
    ...summary.map(
      (s) =>
        `| ${s.scenario} | ${show(s.requests_per_sec, 0)} | ${show(s.cpu_ms_per_request, 2)} | ${show(s.ratio_to_baseline, 3)} | ${show(s.ratio_to_reference, 2)} | ${show(s.cpu_ratio_to_reference, 2)} |`,
    ),
  ].join('\n');
}

