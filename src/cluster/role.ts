/** Which part of `invoicing serve` this process plays. */
import cluster from 'node:cluster';

/**
 * Appended to an API process's arguments by the primary: it tells our own forks from a process
 * that another cluster manager (e.g. pm2's cluster mode) started as its worker, and shows the
 * role in `ps`.
 */
export const API_PROCESS_FLAG = '--api-process';

/**
 * `single`: one process does everything (INVOICING_PROCESSES=1, or the process is another
 * cluster manager's worker, which cannot fork). `primary`: prepares the database and runs
 * `processes` API processes. `api`: one of those.
 */
export type ProcessRole = 'single' | 'primary' | 'api';

export function processRole(processes: number): ProcessRole {
  if (cluster.isWorker) return process.argv.includes(API_PROCESS_FLAG) ? 'api' : 'single';
  return processes === 1 ? 'single' : 'primary';
}
