/**
 * DATABASE_URL and the PostgreSQL settings that go with it (INVOICING_PG_*): the database a
 * process opens (src/db/database.ts) and the bounds of its connections (src/db/pg-pool.ts).
 */
import path from 'node:path';
import { parse as parseConnectionString } from 'pg-connection-string';
import { ConfigError, parseBoolean, parseInteger, read, type Env } from './env-values.js';

export type DatabaseTarget =
  | { kind: 'sqlite'; file: string }
  | {
      kind: 'postgres';
      url: string;
      /** INVOICING_PG_POOL_SIZE: connections this process keeps to PostgreSQL at most. */
      poolSize?: number;
      /** INVOICING_PG_NAMED_STATEMENTS: hot queries as named prepared statements (src/db/pg-statements.ts). */
      namedStatements?: boolean;
      /** The bounds that keep a request from waiting on PostgreSQL (src/db/pg-pool.ts); defaults below. */
      bounds?: PgBounds;
    };

/** PostgreSQL bounds (operating contract, section 7; docs/operations.md, "Faults: PostgreSQL and Redis"). */
export interface PgBounds {
  /** INVOICING_PG_CONNECT_TIMEOUT_MS: getting a connection (a free one of the pool, or a new one). */
  connectTimeoutMs: number;
  /** INVOICING_PG_STATEMENT_TIMEOUT_MS: one statement (the server's statement_timeout); 0 only for migrations. */
  statementTimeoutMs: number;
  /** INVOICING_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: a transaction left idle (the server's idle_in_transaction_session_timeout). */
  idleInTransactionTimeoutMs: number;
}

export const DEFAULT_PG_BOUNDS: Readonly<PgBounds> = Object.freeze({ connectTimeoutMs: 5_000, statementTimeoutMs: 30_000, idleInTransactionTimeoutMs: 60_000 });

/**
 * Default of INVOICING_PG_POOL_SIZE. Measured on the 2-core bench machine (docs/performance.md,
 * "PostgreSQL: connections, commits and statistics"): the CPU the database server shares with the node is the limit, not the
 * connections.
 */
export const DEFAULT_PG_POOL_SIZE = 10;

/**
 * Whether a PostgreSQL URL names a server on this machine: a Unix socket (a host that is a path,
 * or `?host=/path`), `localhost`, 127.0.0.0/8 or ::1. The host is read by pg-connection-string,
 * the parser node-postgres itself connects with; a URL without one connects where `pgHost` (the
 * environment's PGHOST) says, as node-postgres does, or to `localhost` without it. Any other name
 * or address counts as another machine (an address of this machine's own network interface
 * included: set INVOICING_PROCESSES then); so does a URL it cannot read.
 */
export function postgresIsLocal(url: string, pgHost?: string): boolean {
  let host: string;
  try {
    host = (parseConnectionString(url).host || pgHost || '').toLowerCase();
  } catch {
    return false;
  }
  if (host === '' || host.startsWith('/') || host === 'localhost' || host === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export function parseDatabase(env: Env, cwd: string): DatabaseTarget {
  const raw = read(env, 'DATABASE_URL') ?? 'sqlite:./data/invoicing.sqlite';
  // Checked whichever database is named, so a bad value never waits for a switch to PostgreSQL.
  const poolSize = parseInteger(env, 'INVOICING_PG_POOL_SIZE', DEFAULT_PG_POOL_SIZE, 1, 1_000);
  const namedStatements = parseBoolean(env, 'INVOICING_PG_NAMED_STATEMENTS', true);
  const bounds: PgBounds = {
    connectTimeoutMs: parseInteger(env, 'INVOICING_PG_CONNECT_TIMEOUT_MS', DEFAULT_PG_BOUNDS.connectTimeoutMs, 100, 600_000),
    statementTimeoutMs: parseInteger(env, 'INVOICING_PG_STATEMENT_TIMEOUT_MS', DEFAULT_PG_BOUNDS.statementTimeoutMs, 100, 86_400_000),
    idleInTransactionTimeoutMs: parseInteger(env, 'INVOICING_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS', DEFAULT_PG_BOUNDS.idleInTransactionTimeoutMs, 100, 86_400_000),
  };
  if (raw.startsWith('sqlite:')) {
    const file = raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path, e.g. sqlite:./data/invoicing.sqlite');
    return { kind: 'sqlite', file: file === ':memory:' ? file : path.resolve(cwd, file) };
  }
  if (raw.startsWith('postgres://') || raw.startsWith('postgresql://')) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('DATABASE_URL', 'is not a valid postgres:// URL');
    }
    return { kind: 'postgres', url: raw, poolSize, namedStatements, bounds };
  }
  throw new ConfigError('DATABASE_URL', 'must start with sqlite: or postgres://');
}
