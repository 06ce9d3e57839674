/** The shape of a benchmark scenario and what it is given (bench/run.ts runs them). */
import type autocannon from 'autocannon';

export interface BenchContext {
  serviceUrl: string;
  baselineUrl: string;
  apiKey: string;
  /** The seller INN of the bench team's organization. */
  sellerInn: string;
  /** The service's DATABASE_URL and the bench team, for scenarios that seed data directly. */
  databaseUrl: string;
  teamId: string;
}

export interface Scenario {
  name: string;
  /** Which server the requests go to. */
  target: 'service' | 'baseline';
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Runs once before the measurement, e.g. to seed documents. */
  setup?: (ctx: BenchContext) => Promise<void>;
  /** Requests built per call (autocannon's `requests`), for scenarios whose requests differ. */
  requests?: () => autocannon.Request[];
  /** Measured this long instead of BENCH_DURATION (e.g. a soak). */
  durationSec?: number;
  /** Runs only when named in BENCH_SCENARIOS. */
  onlyWhenNamed?: boolean;
  /** Runs right before the measurement (after the warm-up), e.g. to start a load beside it. */
  before?: (ctx: BenchContext) => Promise<unknown>;
  /** Runs right after the measurement; what it answers is reported with the row (`extra`). */
  after?: (ctx: BenchContext) => Promise<Record<string, unknown>>;
}
