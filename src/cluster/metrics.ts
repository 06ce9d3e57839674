/**
 * `/metrics` for the whole machine: whichever API process answers a scrape asks the primary,
 * which collects every API process's metrics (prom-client's `getMetricsAsJSON`) and its own,
 * and aggregates them with prom-client's AggregatorRegistry (counters and histograms summed,
 * each default metric by its own rule). prom-client's `clusterMetrics()` transport is not used:
 * it keeps a timed-out request in its map forever and waits on a process that has died; this
 * one drops a dead process from the collection and bounds the collections in flight.
 */
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { LIMITS, type ProcessMetrics, type ToApiProcess } from './messages.js';
import type { PrimaryChannel } from './primary-channel.js';

/** How long the primary waits for the API processes' metrics. */
export const COLLECT_TIMEOUT_MS = 5_000;
/** How long an API process waits for the primary's aggregate (above the collection's own bound). */
export const MACHINE_METRICS_TIMEOUT_MS = COLLECT_TIMEOUT_MS + 2_000;

interface Collection {
  waiting: Set<number>;
  responses: ProcessMetrics[];
  resolve(text: string): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** An API process the primary can ask. */
export interface MetricsTarget {
  id: number;
  send(message: ToApiProcess): void;
}

/** The primary's side: its own process metrics, the API processes' count and restarts, and the aggregate. */
export class MachineMetrics {
  readonly registry = new Registry();
  /** API processes serving now. */
  readonly processes = new Gauge({
    name: 'invoicing_api_processes',
    help: 'API processes of this invoicing serve that are serving (INVOICING_PROCESSES)',
    registers: [this.registry],
  });
  /** API processes that exited unexpectedly and were replaced. */
  readonly restarts = new Counter({
    name: 'invoicing_api_process_restarts_total',
    help: 'API processes that exited unexpectedly and were replaced',
    registers: [this.registry],
  });
  private readonly collections = new Map<number, Collection>();
  private nextId = 1;

  constructor() {
    // The primary's own CPU and memory count too: the figures are the whole service's.
    collectDefaultMetrics({ register: this.registry, prefix: 'invoicing_' });
  }

  /** Every target's metrics and the primary's, aggregated, in the Prometheus text format. */
  collect(targets: readonly MetricsTarget[]): Promise<string> {
    if (this.collections.size >= LIMITS.collections) {
      return Promise.reject(new Error(`${LIMITS.collections} metrics collections are already under way`));
    }
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.collections.delete(id);
        reject(new Error(`API processes ${[...collection.waiting].join(', ')} did not send their metrics within ${COLLECT_TIMEOUT_MS} ms`));
      }, COLLECT_TIMEOUT_MS);
      const collection: Collection = { waiting: new Set(targets.map((t) => t.id)), responses: [], resolve, reject, timer };
      this.collections.set(id, collection);
      for (const target of targets) target.send({ kind: 'invoicing:collect-metrics', id });
      this.finishIfComplete(id, collection);
    });
  }

  /** An API process's answer to `collect-metrics`. */
  receive(process: number, id: number, metrics: ProcessMetrics | undefined, error: string | undefined): void {
    const collection = this.collections.get(id);
    if (collection === undefined || !collection.waiting.delete(process)) return;
    if (error !== undefined || !Array.isArray(metrics)) {
      this.fail(id, collection, new Error(`API process ${process} could not give its metrics: ${error ?? 'no metrics'}`));
      return;
    }
    collection.responses.push(metrics);
    this.finishIfComplete(id, collection);
  }

  /** A process is gone: its counts went with it; the collections go on without it. */
  processGone(process: number): void {
    for (const [id, collection] of this.collections) {
      if (collection.waiting.delete(process)) this.finishIfComplete(id, collection);
    }
  }

  private finishIfComplete(id: number, collection: Collection): void {
    if (collection.waiting.size > 0) return;
    this.collections.delete(id);
    clearTimeout(collection.timer);
    this.registry
      .getMetricsAsJSON()
      .then((own) => AggregatorRegistry.aggregate([own, ...collection.responses]).metrics())
      .then((text) => {
        if (text.length > LIMITS.metricsChars) throw new Error(`the aggregated metrics exceed ${LIMITS.metricsChars} characters`);
        collection.resolve(text);
      })
      .catch((err: unknown) => collection.reject(err as Error));
  }

  private fail(id: number, collection: Collection, err: Error): void {
    this.collections.delete(id);
    clearTimeout(collection.timer);
    collection.reject(err);
  }
}

/**
 * An API process's side: answers the primary's `collect-metrics` with `local`, and returns what
 * its `/metrics` answers: the primary's aggregate.
 */
export function shareMetrics(channel: PrimaryChannel, local: Registry): () => Promise<string> {
  channel.on('invoicing:collect-metrics', ({ id }) => {
    local.getMetricsAsJSON().then(
      (metrics) => {
        const size = JSON.stringify(metrics).length;
        if (size > LIMITS.metricsChars) channel.send({ kind: 'invoicing:metrics', id, error: `${size} characters of metrics` });
        else channel.send({ kind: 'invoicing:metrics', id, metrics });
      },
      (err: unknown) => channel.send({ kind: 'invoicing:metrics', id, error: (err as Error).message }),
    );
  });
  return async () => {
    const text = await channel.call('metrics', undefined, MACHINE_METRICS_TIMEOUT_MS);
    if (typeof text !== 'string') throw new Error('the primary answered the metrics in an unexpected shape');
    return text;
  };
}
