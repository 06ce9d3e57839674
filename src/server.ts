/** Entry point: loadConfig → start (database, bootstrap, app) → listen; graceful close on SIGTERM/SIGINT. */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { BootstrapError } from './modules/teams/index.js';
import { announceDemoKey, BootstrapFileUnreadableError, startRuntime, type Runtime } from './runtime.js';

/** How long in-flight requests get to finish after SIGTERM before the process gives up. */
const SHUTDOWN_DEADLINE_MS = 15_000;

/** Start-up failures are reported as one line on stderr; the process exits with `code`. */
function fail(line: string, code: number): never {
  process.stderr.write(`${line.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(code);
}

function describeStartupError(config: Config, err: unknown): { line: string; code: number } {
  if (err instanceof BootstrapError) {
    return { line: `Invalid bootstrap file (INVOICING_BOOTSTRAP_FILE=${String(config.bootstrapFile)}): ${err.message}`, code: 2 };
  }
  if (err instanceof BootstrapFileUnreadableError) {
    return { line: `Invalid configuration: INVOICING_BOOTSTRAP_FILE ${err.message}`, code: 2 };
  }
  const where = config.database.kind === 'sqlite' ? `SQLite file ${config.database.file}` : 'PostgreSQL (DATABASE_URL)';
  return { line: `Start-up failed (database: ${where}): ${(err as Error).message}`, code: 1 };
}

export async function serve(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message, 2);
    throw err;
  }

  let runtime: Runtime;
  try {
    runtime = await startRuntime(config);
  } catch (err) {
    const { line, code } = describeStartupError(config, err);
    fail(line, code);
  }

  const { app } = runtime;
  let stage = 'Start-up failed';
  try {
    await app.ready();
    stage = `Cannot listen on ${config.host}:${config.port} (HOST, PORT)`;
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // The demo team is already stored: its key must still be shown, or it is lost.
    if (runtime.demo) announceDemoKey(config, runtime.demo.secret);
    await runtime.close().catch(() => undefined);
    fail(`${stage}: ${(err as Error).message}`, 1);
  }
  if (runtime.demo) announceDemoKey(config, runtime.demo.secret);

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    // A hard deadline so a stuck connection cannot keep the process alive forever.
    const deadline = setTimeout(() => {
      app.log.error('shutdown deadline passed: exiting with requests still open');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    runtime
      .close()
      .then(() => {
        app.log.info('shut down cleanly');
        process.exit(0);
      })
      .catch((err: unknown) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** Whether this file is the process entry (`node dist/src/server.js`), through symlinks too. */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return fs.realpathSync(entry) === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  await serve();
}
