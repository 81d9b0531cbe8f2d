/* Each reads one environment variable: its default when unset, a one-line error when bad. */

export function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** A port number from `name`, or `fallback` when it is unset; a one-line error otherwise. */
export function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535)
    throw new Error(`${name} must be a port number, got "${raw}"`);
  return value;
}

/** A listening address, `host:port`, split; a one-line error naming `variable` otherwise. */
export function hostAndPort(address: string, variable: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  const port = Number(address.slice(at + 1));
  if (at < 0 || address.slice(at + 1) === '' || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${variable} must be host:port or off, got "${address}"`);
  return { host: address.slice(0, at).replace(/^\[|\]$/g, '') || '127.0.0.1', port };
}

/** `host:port` from `name` (checked), `fallback` when unset, or `off`. */
export function listenAddress(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'off') hostAndPort(raw, name);
  return raw;
}

export function milliseconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`${name} must be milliseconds, got "${raw}"`);
  return value;
}

export function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a whole number of at least 1, got "${raw}"`);
  return value;
}

/** A share such as 0.1 (10 %), or undefined when the variable is unset. */
export function optionalShare(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 100)
    throw new Error(`${name} must be a share such as 0.1 (10 %), got "${raw}"`);
  return value;
}

/** A non-negative amount of money, or undefined when the variable is unset. */
export function optionalAmount(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be an amount of money such as 0.05, got "${raw}"`);
  return value;
}

export function optionalToken(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (!/^\S{8,}$/.test(value))
    throw new Error(`${name} must be at least 8 characters without spaces`);
  return value;
}
