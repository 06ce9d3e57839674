/**
 * The `invoicing` command (operating contract, section 1). Each command calls the same code
 * the service uses; configuration comes from the environment like the server's.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { checkMetricsExposure } from '../config/metrics-exposure.js';
import { openDatabase } from '../db/database.js';
import { migrateService } from '../db/migrator.js';
import { BackupRefusedError, databaseBackupFor } from '../db/backup/index.js';
import { EdoRetryError, retryFailedSync } from '../modules/edo/index.js';
import { rotateShareLinks } from '../modules/invoices/index.js';
import { shareUrls } from '../modules/links/index.js';
import {
  BootstrapError,
  BootstrapFileUnreadableError,
  createApiKey,
  deactivateApiKey,
  importBootstrapFile,
  KeyCommandError,
  type BootstrapSummary,
} from '../modules/teams/index.js';
import { systemClock } from '../shared/clock.js';

const USAGE = `Usage: invoicing <command>

Commands:
  serve                                  run the service (same as npm start)
  migrate                                migrate the database named by DATABASE_URL and exit
  import FILE                            apply a bootstrap file and exit (idempotent)
  keys create --team ID --name NAME      create an API key and print its secret once
  keys deactivate KEY_ID                 deactivate an API key (refused everywhere within a second)
  links rotate PUBLIC_ID                 give a document's share links new tokens and end its portal links (the old ones answer 404)
  edo retry PUBLIC_ID                    queue a document's failed EDO sync again (same job id, attempts from 0)
  backup FILE                            write a checked, consistent copy of the database to FILE while the service runs
  restore FILE [--force]                 restore a backup into the database named by DATABASE_URL (empty or absent, unless --force)
  worker                                 run only the background jobs (e-mail retries, EDO sync) until SIGTERM
  help                                   print this text

Configuration is read from the environment (DATABASE_URL, ...); see README.md.
Exit status: 0 done, 1 failure, 2 bad usage, configuration or input.
`;

class UsageError extends Error {}
/** A command naming something that does not exist: bad input (exit status 2). */
class LinkCommandError extends Error {}

const COMMANDS = ['serve', 'migrate', 'import', 'keys', 'links', 'edo', 'worker', 'backup', 'restore'];

/** parseArgs with its own errors (unknown or valueless options) reported as usage errors. */
function parseOptions(args: string[], options: Record<string, { type: 'string' | 'boolean' }>) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function describeSummary(summary: BootstrapSummary): string {
  return Object.entries(summary)
    .map(([what, c]) => `  ${what}: ${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged`)
    .join('\n');
}

async function withDatabase<T>(config: Config, work: (db: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
  const database = openDatabase(config.database);
  try {
    await migrateService(config.database, database);
    return await work(database);
  } finally {
    await database.close();
  }
}

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command) throw new UsageError('a command is needed');
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!COMMANDS.includes(command)) throw new UsageError(`unknown command "${command}"`);
  // Checked before anything heavy is loaded, so bad configuration fails fast for every command.
  const config = loadConfig();
  if (command === 'serve') {
    // Loaded only here: the other commands start faster without the HTTP stack.
    const { serve } = await import('../server.js');
    await serve();
    return -1; // keeps running
  }
  if (command === 'worker') {
    if (config.workerMetricsPort !== null) checkMetricsExposure(config);
    const { runWorker } = await import('../worker.js');
    await runWorker(config);
    return -1; // keeps running until a signal
  }
  switch (command) {
    case 'migrate': {
      const database = openDatabase(config.database);
      try {
        const applied = await migrateService(config.database, database);
        process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'The database is up to date.\n');
      } finally {
        await database.close();
      }
      return 0;
    }
    case 'import': {
      const file = rest[0];
      if (!file || rest.length > 1) throw new UsageError('import needs exactly one FILE');
      const { warnings, ...summary } = await withDatabase(config, (database) => importBootstrapFile(database, file));
      for (const warning of warnings) process.stderr.write(`Warning: ${warning}\n`);
      process.stdout.write(`Applied ${file}:\n${describeSummary(summary)}\n`);
      return 0;
    }
    case 'keys': {
      const [sub, ...args] = rest;
      if (sub === 'create') {
        const { values, positionals } = parseOptions(args, { team: { type: 'string' }, name: { type: 'string' } });
        if (!values.team || !values.name || positionals.length > 0) {
          throw new UsageError('keys create needs --team ID --name NAME');
        }
        const key = await withDatabase(config, (database) =>
          createApiKey(database.db, systemClock, { teamId: values.team as string, name: values.name as string }),
        );
        process.stdout.write(
          `Created API key ${key.id} "${key.name}" for team ${key.teamId}.\n` +
            `Secret (shown only this once, store it now):\n${key.secret}\n`,
        );
        if (!key.withinTariff) {
          process.stderr.write(
            `invoicing: warning: team ${key.teamId} already has ${key.maxApiKeys} active key(s), its tariff's max_api_keys; ` +
              'this key will be refused with api_key_over_tariff_limit until an older key is deactivated\n',
          );
        }
        return 0;
      }
      if (sub === 'deactivate') {
        const id = args[0];
        if (!id || args.length > 1 || !/^\d+$/.test(id)) throw new UsageError('keys deactivate needs a numeric KEY_ID');
        await withDatabase(config, (database) => deactivateApiKey(database.db, systemClock, Number(id)));
        process.stdout.write(`Deactivated API key ${id}.\n`);
        return 0;
      }
      throw new UsageError('keys needs create or deactivate');
    }
    case 'links': {
      const [sub, ...args] = rest;
      if (sub !== 'rotate') throw new UsageError('links needs rotate');
      const publicId = args[0];
      if (!publicId || args.length > 1) throw new UsageError('links rotate needs exactly one PUBLIC_ID');
      const rotated = await withDatabase(config, (database) => rotateShareLinks(database.db, publicId));
      if (!rotated) throw new LinkCommandError(`no document with public_id ${publicId}`);
      const bases = { publicUrl: config.publicUrl, shareUrl: config.shareUrl, portalUrl: config.portalUrl, secret: '' };
      const lines = rotated.links.map((l) => `  ${l.kind}${l.email ? ` <${l.email}>` : ''}: ${shareUrls(bases, l.token).url}`);
      process.stdout.write(
        `Rotated ${rotated.links.length} share link(s) of document ${publicId} (team ${rotated.teamId}); the old share and portal links now answer 404.\n` +
          `New links:\n${lines.join('\n')}\n`,
      );
      return 0;
    }
    case 'backup':
    case 'restore': {
      const { values, positionals } = parseOptions(rest, command === 'restore' ? { force: { type: 'boolean' } } : {});
      const file = positionals[0];
      if (!file || positionals.length > 1) throw new UsageError(`${command} needs exactly one FILE`);
      const backups = databaseBackupFor(config.database);
      if (command === 'backup') {
        const report = await backups.backup(file);
        process.stdout.write(`Backup written: ${report.file} (${report.bytes} bytes, schema version ${report.schemaVersion})\n`);
      } else {
        const report = await backups.restore(file, { force: values.force === true });
        process.stdout.write(`Restored ${report.file} (${report.bytes} bytes, schema version ${report.schemaVersion}); start the service on it\n`);
      }
      return 0;
    }
    case 'edo': {
      const [sub, ...args] = rest;
      if (sub !== 'retry') throw new UsageError('edo needs retry');
      const publicId = args[0];
      if (!publicId || args.length > 1) throw new UsageError('edo retry needs exactly one PUBLIC_ID');
      const retried = await withDatabase(config, (database) => retryFailedSync(database.db, systemClock, publicId));
      process.stdout.write(
        `Queued the EDO sync of document ${publicId} (team ${retried.teamId}, revision ${retried.revision}) again as job ${retried.jobId}; ` +
          'a running server or worker sends it within seconds.\n',
      );
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

export async function main(argv: string[]): Promise<void> {
  try {
    const code = await run(argv);
    if (code >= 0) process.exitCode = code;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`invoicing: ${err.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (err instanceof ConfigError || err instanceof KeyCommandError || err instanceof LinkCommandError || err instanceof EdoRetryError || err instanceof BackupRefusedError) {
      process.stderr.write(`invoicing: ${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof BootstrapError) {
      process.stderr.write(`invoicing: invalid bootstrap file: ${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof BootstrapFileUnreadableError) {
      process.stderr.write(`invoicing: ${err.message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`invoicing: ${(err as Error).message}\n`);
      process.exitCode = 1;
    }
  }
}

await main(process.argv.slice(2));
