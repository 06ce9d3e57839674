/**
 * Reading a bootstrap file: JSON syntax, the schema, and the rules the file alone decides
 * that a schema cannot express (duplicate ids and secrets, one default bank account per
 * organization). Every failure names the JSONPath of the bad value. References that an
 * earlier file may already have stored (a team's `tariff`, an `organization_id`) are not
 * checked here but when applying, against the file and then the database.
 */
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { BootstrapFile, ERROR_MESSAGE, UNKNOWN_KEY_MESSAGE, type BootstrapApiKey } from './bootstrap.schemas.js';

export interface BootstrapIssue {
  /** JSONPath of the offending value, e.g. `$.teams[0].api_keys[1].secret`. */
  path: string;
  message: string;
}

/** An invalid bootstrap file. `path` names the first bad field; `issues` lists every one found. */
export class BootstrapError extends Error {
  readonly path: string;
  readonly issues: readonly BootstrapIssue[];

  constructor(issues: readonly [BootstrapIssue, ...BootstrapIssue[]]) {
    const [first, ...rest] = issues;
    const listed = rest.slice(0, 5).map((issue) => issue.path).join(', ') + (rest.length > 5 ? ', …' : '');
    super(`${first.path}: ${first.message}${rest.length ? ` (and ${rest.length} more: ${listed})` : ''}`);
    this.name = 'BootstrapError';
    this.path = first.path;
    this.issues = issues;
  }
}

/** Throws the issues found, if any. */
export function throwIssues(issues: BootstrapIssue[]): void {
  const [first, ...rest] = issues;
  if (first) throw new BootstrapError([first, ...rest]);
}

export type Segment = string | number;

/** `['teams', 0, 'id']` → `$.teams[0].id`; keys that are not identifiers are quoted. */
export function jsonPath(segments: readonly Segment[]): string {
  let path = '$';
  for (const s of segments) {
    if (typeof s === 'number') path += `[${s}]`;
    else path += /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
  }
  return path;
}

/** A JSON pointer into `root` → segments; walking the value tells array indexes from object keys named "0". */
function pointerSegments(pointer: string, root: unknown): Segment[] {
  const segments: Segment[] = [];
  let node = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      segments.push(Number(key));
      node = node[Number(key)];
    } else {
      segments.push(key);
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
    }
  }
  return segments;
}

const TYPE_MESSAGES: Record<string, string> = {
  object: 'must be an object',
  array: 'must be an array',
  string: 'must be a string',
  integer: 'must be an integer',
  boolean: 'must be true or false',
};

function describeSchemaError(error: ValueError): string {
  const schema = error.schema as Record<string, unknown>;
  if (error.type === ValueErrorType.ObjectRequiredProperty) return 'is required';
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    const message = schema[UNKNOWN_KEY_MESSAGE];
    return typeof message === 'string' ? message : 'is not a known property';
  }
  const message = schema[ERROR_MESSAGE];
  if (typeof message === 'string') return message;
  return TYPE_MESSAGES[String(schema.type)] ?? error.message;
}

function schemaIssues(value: unknown): BootstrapIssue[] {
  if (Value.Check(BootstrapFile, value)) return [];
  // A missing property yields both "required" and a type error at the same path: keep the first.
  const byPath = new Map<string, string>();
  for (const error of Value.Errors(BootstrapFile, value)) {
    const path = jsonPath(pointerSegments(error.path, value));
    if (!byPath.has(path)) byPath.set(path, describeSchemaError(error));
  }
  return [...byPath].map(([path, message]) => ({ path, message }));
}

/** Rules the file alone decides that a schema cannot express: uniqueness and single defaults. */
function fileIssues(file: BootstrapFile): BootstrapIssue[] {
  const issues: BootstrapIssue[] = [];
  const firstSeen = <K>(seen: Map<K, string>, key: K, path: string, what: string): void => {
    const earlier = seen.get(key);
    if (earlier === undefined) seen.set(key, path);
    else issues.push({ path, message: `duplicates ${what} of ${earlier}` });
  };
  const keyIds = new Map<number, string>();
  const secrets = new Map<string, string>();
  const checkKey = (key: BootstrapApiKey, at: Segment[]): void => {
    firstSeen(keyIds, key.id, jsonPath([...at, 'id']), `key id ${key.id}`);
    firstSeen(secrets, key.secret, jsonPath([...at, 'secret']), 'the secret');
  };
  const uniqueIds = (items: readonly { id: string }[] | undefined, at: Segment[], what: string): void => {
    const seen = new Map<string, string>();
    items?.forEach((item, i) => firstSeen(seen, item.id, jsonPath([...at, i, 'id']), `${what} id "${item.id}"`));
  };

  const teamIds = new Map<string, string>();
  file.teams?.forEach((team, t) => {
    const at: Segment[] = ['teams', t];
    firstSeen(teamIds, team.id, jsonPath([...at, 'id']), `team id "${team.id}"`);
    team.api_keys?.forEach((key, k) => checkKey(key, [...at, 'api_keys', k]));
    uniqueIds(team.organizations, [...at, 'organizations'], 'organization');
    uniqueIds(team.bank_accounts, [...at, 'bank_accounts'], 'bank account');
    uniqueIds(team.managers, [...at, 'managers'], 'manager');
    uniqueIds(team.signers, [...at, 'signers'], 'signer');
    const defaults = new Map<string, string>();
    team.bank_accounts?.forEach((account, b) => {
      if (account.is_default === true) {
        const path = jsonPath([...at, 'bank_accounts', b, 'is_default']);
        firstSeen(defaults, account.organization_id, path, `the default account of organization "${account.organization_id}"`);
      }
    });
  });
  file.service_keys?.forEach((key, k) => checkKey(key, ['service_keys', k]));
  return issues;
}

/** Checks a file already in memory (e.g. built in code): schema, then the file's own rules. */
export function validateBootstrap(value: unknown): BootstrapFile {
  throwIssues(schemaIssues(value));
  const file = value as BootstrapFile;
  throwIssues(fileIssues(file));
  return file;
}

/** Parses and checks the text of a bootstrap file; throws BootstrapError naming the bad field. */
export function parseBootstrap(text: string): BootstrapFile {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch {
    // V8's own message quotes the text around the error, which may hold a secret: not reused.
    const at = locateJsonSyntaxError(source);
    throw new BootstrapError([
      { path: '$', message: `is not valid JSON: ${at.reason} at line ${at.line}, column ${at.column} (position ${at.offset})` },
    ]);
  }
  return validateBootstrap(value);
}

/** Where JSON.parse gave up and why. */
interface SyntaxErrorAt {
  offset: number;
  line: number;
  column: number;
  reason: string;
}

class SyntaxStop {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {}
}

/**
 * Re-scans text that JSON.parse refused to find where and why: V8 does not always give the
 * position, and its message quotes the text around the error, which may hold a secret.
 */
function locateJsonSyntaxError(text: string): SyntaxErrorAt {
  let i = 0;
  const stop = (reason: string): never => {
    throw new SyntaxStop(i, i >= text.length ? 'unexpected end of input' : reason);
  };
  const space = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++;
  };
  const string = (): void => {
    i++;
    for (;;) {
      const c = text.charAt(i);
      if (c === '') stop('unterminated string');
      if (c === '"') return void i++;
      if (c < ' ') stop('control character in a string (escape it)');
      if (c === '\\') {
        i++;
        if (text.charAt(i) === 'u') {
          if (!/^[0-9A-Fa-f]{4}$/.test(text.slice(i + 1, i + 5))) stop('invalid \\u escape');
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text.charAt(i)) || text.charAt(i) === '') stop('invalid escape');
      }
      i++;
    }
  };
  const container = (close: string, member: () => void): void => {
    i++;
    space();
    if (text.charAt(i) === close) return void i++;
    for (;;) {
      member();
      space();
      if (text.charAt(i) === ',') i++;
      else if (text.charAt(i) === close) return void i++;
      else stop(`expected "," or "${close}"`);
    }
  };
  const value = (): void => {
    space();
    const c = text.charAt(i);
    if (c === '{') {
      return container('}', () => {
        space();
        if (text.charAt(i) !== '"') stop('expected a double-quoted property name');
        string();
        space();
        if (text.charAt(i) !== ':') stop('expected ":"');
        i++;
        value();
      });
    }
    if (c === '[') return container(']', value);
    if (c === '"') return string();
    const number = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
    number.lastIndex = i;
    if (number.test(text)) return void (i = number.lastIndex);
    for (const word of ['true', 'false', 'null']) if (text.startsWith(word, i)) return void (i += word.length);
    stop(`unexpected character ${JSON.stringify(c)}`);
  };

  let found = new SyntaxStop(text.length, 'invalid JSON');
  try {
    value();
    space();
    if (i < text.length) stop('unexpected text after the JSON value');
  } catch (e) {
    if (!(e instanceof SyntaxStop)) throw e;
    found = e;
  }
  const before = text.slice(0, found.offset).split('\n');
  return { offset: found.offset, reason: found.reason, line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}
