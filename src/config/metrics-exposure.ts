/**
 * Whether `/metrics` may be served as configured. On a HOST other machines can reach it needs
 * INVOICING_METRICS_TOKEN, unless INVOICING_METRICS_PUBLIC=true says it may be open: the
 * metrics name routes, counts and the process's memory, nothing a stranger needs. Checked where
 * a process starts to serve it (an API node; `invoicing worker` with a metrics port), not by
 * loadConfig, so the CLI's other commands run whatever HOST says.
 */
import ipaddr from 'ipaddr.js';
import { ConfigError, type Config } from './config.js';

/** Whether HOST listens on this machine only: `localhost`, 127.0.0.0/8 or ::1 (an IPv4-mapped one too). */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (name === 'localhost') return true;
  if (!ipaddr.isValid(name)) return false;
  return ipaddr.process(name).range() === 'loopback';
}

/** Throws the one-line ConfigError naming INVOICING_METRICS_TOKEN when `/metrics` would be open to the network. */
export function checkMetricsExposure(config: Pick<Config, 'host' | 'metricsToken' | 'metricsPublic'>): void {
  if (config.metricsToken !== null || config.metricsPublic || isLoopbackHost(config.host)) return;
  throw new ConfigError(
    'INVOICING_METRICS_TOKEN',
    `is required when HOST (${JSON.stringify(config.host)}) is not a loopback address: /metrics would be open to every client; set it, or set INVOICING_METRICS_PUBLIC=true to serve /metrics without a token`,
  );
}
