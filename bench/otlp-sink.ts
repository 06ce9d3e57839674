/**
 * BENCH_OTEL=1: the service traced, exporting to this OTLP/HTTP receiver, which answers 200 and
 * keeps nothing, so the bench measures what tracing costs the service (the spans made, scrubbed,
 * batched, encoded and sent) and not a collector. Compare with a run without BENCH_OTEL on the
 * same machine and build: the target is ≥ 0.97 of the untraced figures.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface OtlpSink {
  /** What the service's environment and node arguments gain. */
  env: Record<string, string>;
  nodeArgs: string[];
  /** Export requests received (a sanity check that spans did flow). */
  received(): number;
  close(): Promise<void>;
}

export async function startOtlpSink(serviceRoot: string): Promise<OtlpSink> {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
    nodeArgs: ['--import', path.join(serviceRoot, 'dist', 'src', 'tracing', 'register.js')],
    received: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
