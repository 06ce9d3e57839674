/**
 * Entry point: loadConfig → start (database, bootstrap, app) → listen; graceful close on
 * SIGTERM/SIGINT. With INVOICING_PROCESSES above 1 (the default `auto`: one per core) this
 * process is the primary: it prepares the database once and runs that many API processes,
 * which run this file too, each as an `api` process (src/cluster/).
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { connectToPrimary, processRole, startPrimary, StartupFailure } from './cluster/index.js';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { checkMetricsExposure } from './config/metrics-exposure.js';
import { logDestination, loggerOptions } from './http/logging.js';
import { BootstrapError } from './modules/teams/index.js';
import { announceDemoKey, BootstrapFileUnreadableError, prepareDatabase, startApiProcess, startRuntime, type Runtime } from './runtime.js';

/** How long in-flight requests get to finish after SIGTERM before the process gives up. */
const SHUTDOWN_DEADLINE_MS = 15_000;
/** The primary's own bound on a shutdown: the API processes' deadline, and time to exit after it. */
const PRIMARY_SHUTDOWN_DEADLINE_MS = SHUTDOWN_DEADLINE_MS + 5_000;

/** Start-up failures are reported as one line on stderr; the process exits with `code`. */
function fail(line: string, code: number): never {
  process.stderr.write(`${oneLine(line)}\n`);
  process.exit(code);
}

function oneLine(line: string): string {
  return line.replace(/\s*\n\s*/g, ' ');
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
    checkMetricsExposure(config);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message, 2);
    throw err;
  }
  const role = processRole(config.processes);
  if (role === 'primary') return servePrimary(config);
  if (role === 'api') return serveApiProcess(config);
  return serveOneProcess(config);
}

/** What `starting` gives, or its failure as the one line on stderr and the exit. */
async function startedOrFail<T>(config: Config, starting: Promise<T>): Promise<T> {
  try {
    return await starting;
  } catch (err) {
    const { line, code } = describeStartupError(config, err);
    fail(line, code);
  }
}

/** One process does everything (INVOICING_PROCESSES=1). */
async function serveOneProcess(config: Config): Promise<void> {
  const runtime = await startedOrFail(config, startRuntime(config));
  const listening = await listen(config, runtime);
  // The demo team is already stored: its key must be shown even when listening failed, or it is lost.
  if (runtime.demo) announceDemoKey(config, runtime.demo.secret);
  if (listening !== null) fail(listening, 1);
  closeOnSignals(runtime);
}

/** Listens on HOST:PORT; on failure closes the runtime and returns the line to report. */
async function listen(config: Config, runtime: Runtime): Promise<string | null> {
  const { app } = runtime;
  let stage = 'Start-up failed';
  try {
    await app.ready();
    stage = `Cannot listen on ${config.host}:${config.port} (HOST, PORT)`;
    await app.listen({ port: config.port, host: config.host });
    return null;
  } catch (err) {
    await runtime.close().catch(() => undefined);
    return `${stage}: ${(err as Error).message}`;
  }
}

/**
 * Graceful close on SIGTERM or SIGINT, and on the returned function (an API process: its
 * primary's word). A second signal exits at once. The primary's word after a signal, or a
 * signal after it, is not a second signal: Ctrl-C sends SIGINT to every process of the group,
 * the API processes included, and the primary passes it on.
 */
function closeOnSignals(runtime: Runtime): (reason: string) => void {
  const { app } = runtime;
  let closing = false;
  let signals = 0;
  const shutdown = (reason: string, bySignal: boolean) => {
    if (bySignal) signals += 1;
    if (closing) {
      if (bySignal && signals > 1) {
        app.log.warn({ signal: reason }, 'second signal: exiting without waiting');
        process.exit(1);
      }
      return;
    }
    closing = true;
    app.log.info(bySignal ? { signal: reason } : { reason }, 'shutting down: finishing in-flight requests');
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
  process.on('SIGTERM', () => shutdown('SIGTERM', true));
  process.on('SIGINT', () => shutdown('SIGINT', true));
  return (reason) => shutdown(reason, false);
}

/**
 * The primary: the once-only part of the start (database, bootstrap, demo team, secret), then
 * the API processes; the demo key once they all listen; their graceful shutdown on a signal.
 */
async function servePrimary(config: Config): Promise<void> {
  const prepared = await startedOrFail(config, prepareDatabase(config));
  // Each API process opens its own connections; the primary needs none.
  await prepared.database.close();
  const logger = pino(loggerOptions(config.logLevel), logDestination());
  // Short legacy secrets: imported, logged as warnings naming their JSON path (never the secret).
  for (const warning of prepared.bootstrapWarnings) logger.warn({ bootstrap_file: config.bootstrapFile }, warning);

  const primary = startPrimary({
    processes: config.processes,
    logger,
    rateLimits: config.redisUrl === null,
    writeLock: config.database.kind === 'sqlite',
  });
  try {
    await primary.ready;
  } catch (err) {
    primary.kill();
    if (prepared.demo) announceDemoKey(config, prepared.demo.secret);
    const failure = err instanceof StartupFailure ? err : new StartupFailure(`Start-up failed: ${(err as Error).message}`, 1);
    fail(failure.line, failure.code);
  }
  if (prepared.demo) announceDemoKey(config, prepared.demo.secret);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: ending the API processes without waiting');
      primary.kill();
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: the API processes finish their in-flight requests');
    const deadline = setTimeout(() => {
      logger.error('shutdown deadline passed: ending the API processes still running');
      primary.kill();
      process.exit(1);
    }, PRIMARY_SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    void primary.shutdown().then((code) => {
      if (code === 0) logger.info('shut down cleanly');
      else logger.error('an API process did not shut down cleanly');
      process.exit(code);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Only now do the API processes answer: a first answer means the key is printed and a signal is handled.
  primary.open();
  logger.info({ processes: config.processes }, `serving with ${config.processes} API processes`);
}

/**
 * One API process: builds the app with what it shares through the primary, listens (the
 * primary holds the socket), and tells the primary it serves or why it cannot.
 */
async function serveApiProcess(config: Config): Promise<void> {
  const link = connectToPrimary({ rateLimits: config.redisUrl === null, writeLock: config.database.kind === 'sqlite' });
  // Asked to stop while still starting: nothing is in flight yet.
  let onShutdown: () => void = () => process.exit(0);
  link.onShutdown(() => onShutdown());
  const report = async (line: string, code: number): Promise<never> => {
    await link.startupFailed(oneLine(line), code);
    process.exit(code);
  };
  let runtime: Runtime;
  try {
    runtime = await startApiProcess(config, link);
  } catch (err) {
    const { line, code } = describeStartupError(config, err);
    return report(line, code);
  }
  const listening = await listen(config, runtime);
  if (listening !== null) return report(listening, 1);
  const shutdown = closeOnSignals(runtime);
  onShutdown = () => shutdown('the primary asked');
  link.ready();
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
