/** A TCP proxy to PostgreSQL that counts what passes: the scale-out run's round trips, statements and connections per node. */
import net from 'node:net';
import { PgMessageCounter } from './pg-messages.js';

/** A TCP proxy to PostgreSQL counting the client's round trips and connections. */
export class CountingPgProxy {
  roundTrips = 0;
  /** Statements run (bound or sent as a query), by their first words (for what a request's round trips are). */
  readonly statements = new Map<string, number>();
  opened = 0;
  open = 0;
  peakOpen = 0;
  private server: net.Server | null = null;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<this> {
    this.server = net.createServer((client) => {
      this.opened++;
      this.open++;
      this.peakOpen = Math.max(this.peakOpen, this.open);
      const upstream = net.connect(this.target.port, this.target.host);
      const counter = new PgMessageCounter({
        roundTrip: () => this.roundTrips++,
        statement: (key) => this.statements.set(key, (this.statements.get(key) ?? 0) + 1),
      });
      client.on('data', (chunk: Buffer) => {
        upstream.write(chunk);
        counter.push(chunk);
      });
      upstream.on('data', (chunk) => client.write(chunk));
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      let closed = false;
      const onClose = () => {
        if (!closed) {
          closed = true;
          this.open--;
        }
        close();
      };
      client.on('close', onClose).on('error', onClose);
      upstream.on('close', onClose).on('error', onClose);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  close(): void {
    this.server?.close();
  }
}

/** Statements run through all of `proxies`, by their first words. */
export function statementCounts(proxies: CountingPgProxy[]): Map<string, number> {
  const all = new Map<string, number>();
  for (const proxy of proxies) for (const [k, n] of proxy.statements) all.set(k, (all.get(k) ?? 0) + n);
  return all;
}
