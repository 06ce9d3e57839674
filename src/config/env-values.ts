/**
 * Reading one environment variable: the value trimmed (empty counts as unset), integers and
 * booleans checked, and the ConfigError whose message is one line naming the variable.
 */

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

/** A value quoted for an error message: JSON escaping keeps the message on one line. */
export function shown(raw: string): string {
  return JSON.stringify(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw);
}

export function read(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

export function parseInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer from ${min} to ${max} (got ${shown(raw)})`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be an integer from ${min} to ${max} (got ${shown(raw)})`);
  return value;
}

export function parseBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const lower = raw.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) return true;
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  throw new ConfigError(name, `must be true or false (got ${shown(raw)})`);
}
