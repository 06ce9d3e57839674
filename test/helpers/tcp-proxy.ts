/**
 * A TCP proxy a test controls, between the service and PostgreSQL or Redis, to make the faults
 * of a real network on real sockets:
 * - `pass()`: bytes flow both ways (what was held while stalled goes first, in order);
 * - `stall()`: connections are accepted and kept, existing and new, but no byte is forwarded
 *   either way (a server that stopped answering, or a network that drops packets while TCP
 *   stays up);
 * - `refuse()`: the port is closed (new connections refused) and every connection dropped;
 * - `drop()`: every connection is closed now (both ends); new ones go on as the mode says.
 */
import net from 'node:net';

type Mode = 'pass' | 'stall' | 'refuse';

/** One client connection and its connection to the target. */
class Pair {
  /** Bytes held while stalled, per direction, in arrival order. */
  private readonly held: Array<{ to: net.Socket; chunk: Buffer }> = [];
  private closed = false;

  constructor(
    private readonly client: net.Socket,
    private readonly upstream: net.Socket,
    private readonly stalled: () => boolean,
    onClose: () => void,
  ) {
    const forward = (to: net.Socket) => (chunk: Buffer) => {
      if (this.stalled()) this.held.push({ to, chunk });
      else to.write(chunk);
    };
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    const close = () => {
      if (this.closed) return;
      this.closed = true;
      client.destroy();
      upstream.destroy();
      onClose();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', close);
      socket.on('close', close);
      socket.on('end', close);
    }
  }

  flush(): void {
    for (const { to, chunk } of this.held.splice(0)) if (!to.destroyed) to.write(chunk);
  }

  destroy(): void {
    this.client.destroy();
    this.upstream.destroy();
  }
}

export class TcpProxy {
  private mode: Mode = 'pass';
  private readonly pairs = new Set<Pair>();
  private server: net.Server | null = null;

  private constructor(
    private readonly target: { host: string; port: number },
    public port: number,
  ) {}

  /** A proxy to `target` on a free port of 127.0.0.1, passing. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target, 0);
    await proxy.listen();
    return proxy;
  }

  /** `url` (postgres:// or redis://) with its host and port replaced by this proxy's. */
  through(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  get connections(): number {
    return this.pairs.size;
  }

  async pass(): Promise<void> {
    this.mode = 'pass';
    if (this.server === null) await this.listen();
    for (const pair of this.pairs) pair.flush();
  }

  stall(): void {
    this.mode = 'stall';
  }

  async refuse(): Promise<void> {
    this.mode = 'refuse';
    const server = this.server;
    this.server = null;
    this.drop();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  drop(): void {
    for (const pair of this.pairs) pair.destroy();
    this.pairs.clear();
  }

  async close(): Promise<void> {
    await this.refuse();
  }

  private async listen(): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // The same port again after refuse(): the service's URL names it.
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    const pair = new Pair(client, upstream, () => this.mode === 'stall', () => this.pairs.delete(pair));
    this.pairs.add(pair);
  }
}
