/** Reading a bootstrap file from disk and applying it: `INVOICING_BOOTSTRAP_FILE` at start and `invoicing import`. */
import fs from 'node:fs';
import type { DatabaseHandle } from '../../db/database.js';
import { systemClock } from '../../shared/clock.js';
import { applyBootstrap, parseBootstrap, type BootstrapSummary } from './bootstrap.js';
import { jsonPath } from './bootstrap.parse.js';
import type { BootstrapFile } from './bootstrap.schemas.js';

/** Secrets shorter than this are imported (legacy keys must keep working) with a warning. */
export const SHORT_SECRET_CHARS = 24;

/**
 * One warning per API key secret shorter than 24 characters, naming its JSON path (never the
 * secret): `$.teams[0].api_keys[1].secret is shorter than 24 characters ...`.
 */
export function shortSecretWarnings(file: BootstrapFile): string[] {
  const warnings: string[] = [];
  const check = (secret: string, path: Array<string | number>) => {
    if (secret.length < SHORT_SECRET_CHARS) {
      warnings.push(
        `${jsonPath(path)} is shorter than ${SHORT_SECRET_CHARS} characters: imported, but guessable; replace it with a new key (invoicing keys create)`,
      );
    }
  };
  (file.teams ?? []).forEach((team, t) => (team.api_keys ?? []).forEach((key, k) => check(key.secret, ['teams', t, 'api_keys', k, 'secret'])));
  (file.service_keys ?? []).forEach((key, k) => check(key.secret, ['service_keys', k, 'secret']));
  return warnings;
}

export type BootstrapImport = BootstrapSummary & { warnings: string[] };

/** The bootstrap file could not be read at all (missing, a directory, no permission). */
export class BootstrapFileUnreadableError extends Error {
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(`cannot read ${file}${code ? ` (${code})` : ''}`);
    this.name = 'BootstrapFileUnreadableError';
  }
}

/**
 * Reads and applies the file in one transaction; throws BootstrapError naming the bad field.
 * `warnings` name the JSON path of every short secret (the caller prints or logs them).
 */
export async function importBootstrapFile(database: DatabaseHandle, file: string): Promise<BootstrapImport> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new BootstrapFileUnreadableError(file, err);
  }
  const parsed = parseBootstrap(text);
  const summary = await applyBootstrap(database.db, parsed, systemClock);
  return { ...summary, warnings: shortSecretWarnings(parsed) };
}
