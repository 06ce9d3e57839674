/** A real HTTP receiver on loopback for webhook tests: records every request, answers as told. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
  /** The request path with its query. */
  path: string;
}

export type Answer = { status: number; body?: string } | { hang: true };

export class Receiver {
  readonly received: Received[] = [];
  /** Answers to give, in order; when empty, 200. */
  readonly answers: Answer[] = [];
  private server!: http.Server;
  private hanging: http.ServerResponse[] = [];

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(',') : String(v);
        this.received.push({ headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), path: req.url ?? '' });
        const answer = this.answers.shift() ?? { status: 200 };
        if ('hang' in answer) {
          this.hanging.push(res);
          return;
        }
        res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? 'ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
