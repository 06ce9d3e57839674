/** Reading a bootstrap file from disk and applying it: `INVOICING_BOOTSTRAP_FILE` at start and `invoicing import`. */
import fs from 'node:fs';
import type { DatabaseHandle } from '../../db/database.js';
import { systemClock } from '../../shared/clock.js';
import { applyBootstrap, parseBootstrap, type BootstrapSummary } from './bootstrap.js';

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

/** Reads and applies the file in one transaction; throws BootstrapError naming the bad field. */
export async function importBootstrapFile(database: DatabaseHandle, file: string): Promise<BootstrapSummary> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new BootstrapFileUnreadableError(file, err);
  }
  return applyBootstrap(database.db, parseBootstrap(text), systemClock);
}
