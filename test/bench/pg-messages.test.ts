/**
 * The scale-out bench's PostgreSQL proxy counts from the client's bytes (bench/pg-messages.ts):
 * round trips (Sync, Query) and statements run, a named statement's runs counted by the text it
 * was parsed with on that connection, also when later runs only bind it.
 */
import { describe, expect, it } from 'vitest';
import { PgMessageCounter } from '../../bench/pg-messages.js';

const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const cstr = (s: string) => Buffer.concat([Buffer.from(s, 'utf8'), Buffer.from([0])]);
const message = (type: string, body: Buffer) => Buffer.concat([Buffer.from(type), int32(body.length + 4), body]);
const startup = () => {
  const body = Buffer.concat([int32(196608), cstr('user'), cstr('postgres'), Buffer.from([0])]);
  return Buffer.concat([int32(body.length + 4), body]);
};
const sslRequest = () => Buffer.concat([int32(8), int32(80877103)]);
const parse = (name: string, text: string) => message('P', Buffer.concat([cstr(name), cstr(text), Buffer.from([0, 0])]));
const bind = (statement: string) => message('B', Buffer.concat([cstr(''), cstr(statement), Buffer.from([0, 0, 0, 0, 0, 0])]));
const execute = () => message('E', Buffer.concat([cstr(''), int32(0)]));
const sync = () => message('S', Buffer.alloc(0));
const query = (text: string) => message('Q', cstr(text));

function counted(bytes: Buffer, chunk = bytes.length) {
  let roundTrips = 0;
  const statements = new Map<string, number>();
  const counter = new PgMessageCounter({ roundTrip: () => roundTrips++, statement: (k) => statements.set(k, (statements.get(k) ?? 0) + 1) });
  for (let i = 0; i < bytes.length; i += chunk) counter.push(bytes.subarray(i, i + chunk));
  return { roundTrips, statements: Object.fromEntries(statements) };
}

describe('PgMessageCounter', () => {
  const named = 'with "new_invoice" as (insert into "invoices" ("number", "date") values ($1, $2)) select 1';
  const stream = Buffer.concat([
    sslRequest(),
    startup(),
    // A named statement: parsed once, then only bound.
    parse('q_1', named), bind('q_1'), execute(), sync(),
    bind('q_1'), execute(), sync(),
    bind('q_1'), execute(), sync(),
    // Unnamed statements: parsed before each bind.
    parse('', 'select   *\n from teams where id = $1'), bind(''), execute(), sync(),
    parse('', 'select 1'), bind(''), execute(), sync(),
    query('BEGIN'),
  ]);

  it('counts a named statement at each run, by the text it was parsed with, and each round trip', () => {
    expect(counted(stream)).toEqual({
      roundTrips: 6,
      statements: {
        [named.slice(0, 60)]: 3,
        'select * from teams where id = $1': 1,
        'select 1': 1,
        BEGIN: 1,
      },
    });
  });

  it('reads messages split anywhere across chunks', () => {
    for (const chunk of [1, 3, 7, 64]) expect(counted(stream, chunk)).toEqual(counted(stream));
  });

  it('names a run of a statement parsed before the proxy saw the connection', () => {
    expect(counted(Buffer.concat([startup(), bind('q_9'), execute(), sync()])).statements).toEqual({ '(statement q_9 parsed before the count)': 1 });
  });
});
