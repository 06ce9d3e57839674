/**
 * The processes of `invoicing serve` on one machine (INVOICING_PROCESSES; docs/architecture.md,
 * docs/adr/0002-processes.md): a primary that prepares the database once and runs N API
 * processes with node:cluster, and what those share through it: rate-limit counters (without
 * Redis), the SQLite write lock and the machine's metrics. Infrastructure like `http/` and
 * `db/`: the entry point wires it in; nothing below the app imports it.
 */
export { connectToPrimary, type ApiProcessLink } from './api-process.js';
export { startPrimary, StartupFailure, type Primary, type PrimaryOptions } from './primary.js';
export { processRole, type ProcessRole } from './role.js';
