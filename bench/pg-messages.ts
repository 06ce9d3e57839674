/**
 * What a client sends PostgreSQL on one connection, counted from its bytes (the scale-out
 * bench's proxy, bench/scale-out.ts): round trips (one per Sync or simple Query message) and
 * statements run, by their first words.
 *
 * A statement runs once per Bind (extended protocol) or Query (simple protocol). A named
 * prepared statement is parsed once per connection and afterwards only bound, so the text of
 * a Bind is the one its statement name was parsed with on this connection (node-postgres: one
 * name per text, src/db/pg-statements.ts); an unnamed statement is parsed before every Bind.
 */
export interface PgMessageSink {
  roundTrip(): void;
  /** A statement ran: its first 60 characters, whitespace folded. */
  statement(key: string): void;
}

/** One connection's reader: hand it the client's bytes as they come. */
export class PgMessageCounter {
  private started = false;
  private pending: Buffer = Buffer.alloc(0);
  /** This connection's parsed statements: name ('' for the unnamed one) → its text's key. */
  private readonly parsed = new Map<string, string>();

  constructor(private readonly sink: PgMessageSink) {}

  /** The next bytes the client sent; messages may be split across calls. */
  push(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    for (;;) {
      if (!this.started) {
        // Untyped start-up packets: length, then a code (SSL/GSS requests come first).
        if (this.pending.length < 8) return;
        const length = this.pending.readInt32BE(0);
        if (this.pending.length < length) return;
        const code = this.pending.readInt32BE(4);
        if (code !== 80877103 && code !== 80877104) this.started = true;
        this.pending = this.pending.subarray(length);
        continue;
      }
      if (this.pending.length < 5) return;
      const length = this.pending.readInt32BE(1);
      if (this.pending.length < 1 + length) return;
      const type = this.pending[0];
      const body = this.pending.subarray(5, 1 + length);
      if (type === 0x53 /* S: Sync */) this.sink.roundTrip();
      else if (type === 0x51 /* Q: Query */) {
        this.sink.roundTrip();
        this.sink.statement(keyOf(cString(body, 0).text));
      } else if (type === 0x50 /* P: Parse: name, then the query */) {
        const name = cString(body, 0);
        this.parsed.set(name.text, keyOf(cString(body, name.next).text));
      } else if (type === 0x42 /* B: Bind: portal, then the statement's name */) {
        const portal = cString(body, 0);
        const statement = cString(body, portal.next).text;
        this.sink.statement(this.parsed.get(statement) ?? `(statement ${statement || 'unnamed'} parsed before the count)`);
      } else if (type === 0x43 /* C: Close */ && body[0] === 0x53 /* S: a statement */) {
        this.parsed.delete(cString(body, 1).text);
      }
      this.pending = this.pending.subarray(1 + length);
    }
  }
}

function cString(buf: Buffer, start: number): { text: string; next: number } {
  const end = buf.indexOf(0, start);
  const stop = end === -1 ? buf.length : end;
  return { text: buf.subarray(start, stop).toString('utf8'), next: stop + 1 };
}

function keyOf(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 60);
}
