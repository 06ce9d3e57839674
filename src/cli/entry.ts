/**
 * The process entry of the `invoicing` command (bin/invoicing.js, the tests' child processes,
 * the API processes it forks): tracing first, when configured (src/tracing/register.ts), then
 * the command, loaded only afterwards so the instrumentations see its modules load.
 */
import '../tracing/register.js';

await import('./main.js');
