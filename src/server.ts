/** Entry point: loadConfig → start (database, bootstrap, app) → listen; graceful close on SIGTERM/SIGINT. */
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig } from './config/config.js';
import { BootstrapError } from './modules/teams/bootstrap.js';
import { startRuntime } from './runtime.js';

export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  let runtime;
  try {
    runtime = await startRuntime(config);
  } catch (err) {
    if (err instanceof BootstrapError) {
      process.stderr.write(`Invalid bootstrap file ${String(config.bootstrapFile)}: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`Start-up failed: ${(err as Error).message}\n`);
    process.exit(1);
  }

  const { app } = runtime;
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    // A hard deadline so a stuck connection cannot keep the process alive forever.
    const deadline = setTimeout(() => process.exit(1), 15_000);
    deadline.unref();
    runtime
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await serve();
}
