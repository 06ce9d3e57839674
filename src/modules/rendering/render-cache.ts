/**
 * The rendered-file cache of the share and portal routes (docs/security.md): PDFs and QR
 * images by the hash of everything they are rendered from (the print model read from the
 * database on every request, so any change — a new revision, a status, a restriction — is a
 * new key and nothing stale is ever served), bounded in bytes with least-recently-used
 * eviction. Concurrent requests for the same key share one render.
 */
import crypto from 'node:crypto';

export class RenderCache {
  private readonly entries = new Map<string, Buffer>();
  private readonly inFlight = new Map<string, Promise<Buffer>>();
  private bytes = 0;

  /** `maxBytes` 0 turns caching off (renders are still shared while in flight). */
  constructor(private readonly maxBytes: number) {}

  /** The cached bytes of `key`, or the result of `render` (stored when it fits). */
  async get(key: string, render: () => Promise<Buffer>): Promise<Buffer> {
    const hit = this.entries.get(key);
    if (hit) {
      // Most recently used goes last.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const started = render().then(
      (body) => {
        this.inFlight.delete(key);
        this.store(key, body);
        return body;
      },
      (err: unknown) => {
        this.inFlight.delete(key);
        throw err;
      },
    );
    this.inFlight.set(key, started);
    return started;
  }

  /** Bytes held now (for tests and metrics). */
  get size(): number {
    return this.bytes;
  }

  private store(key: string, body: Buffer): void {
    if (body.length > this.maxBytes || this.entries.has(key)) return;
    this.entries.set(key, body);
    this.bytes += body.length;
    for (const [oldest, value] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= value.length;
    }
  }
}

/** A strong ETag for a file kind rendered from `model`: the SHA-256 of both, base64url. */
export function renderKey(kind: string, model: unknown): string {
  return crypto.createHash('sha256').update(kind).update('\n').update(JSON.stringify(model)).digest('base64url');
}
