/**
 * PostgreSQL: pieces of ONE statement written by several modules (docs/performance.md, "Session
 * 11"). A new document with an e-mail or an EDO send used to take a transaction: BEGIN, the
 * daily quota, the document, the outbox rows, the EDO job, COMMIT, five to eight round trips
 * where a plain create takes one, and each costs the API process a socket write and a wake-up
 * of the server (the e-mail and EDO creates ran at half a plain create's rate). With these parts the document's statement
 * (invoice.repository.ts `insertNewDocumentPg`) also writes the rows of its effects as further
 * data-modifying CTEs, so it stays one round trip that commits alone.
 *
 * A part's text depends only on its `key`: the statement's text is built once per combination of
 * keys and runs as a named prepared statement (pg-statements.ts). Its values go in the order of
 * its parameters, numbered by the statement (`param(i)` is the part's i-th).
 */
export interface PgStatementPart {
  /** What the text depends on (e.g. the table a quota row is in); nothing per call. */
  key: string;
  /**
   * The part's CTEs, `"name" as (...)` comma separated. `condition`, when not null, is SQL that
   * every row of the statement is written under (a gate's, below).
   */
  ctes(param: (i: number) => string, condition: string | null): string;
  values: unknown[];
}

/**
 * A part that decides whether the statement writes anything: `condition` holds when it let the
 * write through (e.g. the daily e-mail quota had room), and every other row is written only
 * then. Its CTEs come first in the statement (the others refer to them).
 */
export interface PgGatePart extends PgStatementPart {
  condition: string;
}

/**
 * `insert into "table" (columns) select ... from unnest(arrays)`: many rows, a fixed text. Each
 * column travels as one array parameter (`param(i)` for the i-th, asked in order); `fixed` columns
 * come first and take the same value in every row (SQL, e.g. a parameter).
 */
export function pgUnnestInsert(
  table: string,
  columns: ReadonlyArray<readonly [string, string]>,
  param: (i: number) => string,
  condition: string | null,
  fixed: ReadonlyArray<readonly [string, string]> = [],
): string {
  const names = columns.map(([c]) => `"${c}"`).join(', ');
  const all = [...fixed.map(([c]) => `"${c}"`), names].join(', ');
  const values = [...fixed.map(([, value]) => value), ...columns.map(([c]) => `r."${c}"`)].join(', ');
  return (
    `insert into "${table}" (${all}) select ${values} ` +
    `from unnest(${columns.map(([, type], i) => `${param(i)}::${type}[]`).join(', ')}) as r(${names})` +
    (condition ? ` where ${condition}` : '')
  );
}

/**
 * `insert into "table" (columns) select $…, $…`: one row, one parameter per column. `insert …
 * select` takes each parameter's type from its column, as `values` would, and can stand under
 * `condition`.
 */
export function pgRowInsert(table: string, columns: ReadonlyArray<string>, param: (i: number) => string, condition: string | null): string {
  return (
    `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) ` +
    `select ${columns.map((_, i) => param(i)).join(', ')}${condition ? ` where ${condition}` : ''}`
  );
}
