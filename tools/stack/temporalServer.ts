import { Connection, type ConnectionOptions } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { JOB_SEARCH_ATTRIBUTES } from '../../src/workflows/definitions';
import { freePort, spawnGuarded, sleep, type GuardedProcess } from './processes';
import { TIMER_MAX_TIME_SHIFT } from './temporalClusterConfig';

const SEARCH_ATTRIBUTE_TYPE_NAMES: Record<string, string> = {
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.INT]: 'Int',
  [SearchAttributeType.TEXT]: 'Text',
  [SearchAttributeType.BOOL]: 'Bool',
  [SearchAttributeType.DOUBLE]: 'Double',
  [SearchAttributeType.DATETIME]: 'Datetime',
  [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
};

export interface DevServerOptions {
  cliPath: string;
  ip?: string;
  port: number;
  /** Web UI port; `undefined` runs headless. */
  uiPort?: number;
  /** The HTTP API and metrics ports; left to the server (a random free port) when absent. */
  httpPort?: number;
  metricsPort?: number;
  /** SQLite file for persistence across restarts; omitted = in memory. */
  dbFilename?: string;
  /** Server output goes here (the server is chatty even at warn level). */
  logFile: string;
  readyTimeoutMs?: number;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: GuardedProcess;
  stop(): Promise<void>;
}

export function logTail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Waits until the frontend answers `probe` (by default: the default namespace is usable); never
 * a fixed sleep, and no longer than the server process lives.
 */
export async function waitForTemporal(
  address: string,
  options: {
    timeoutMs: number;
    exited?: Promise<unknown>;
    connect?: ConnectionOptions;
    probe?: (connection: Connection) => Promise<unknown>;
  },
): Promise<void> {
  const probe =
    options.probe ??
    ((connection: Connection) =>
      connection.workflowService.describeNamespace({ namespace: 'default' }));
  const deadline = Date.now() + options.timeoutMs;
  let exited = false;
  void options.exited?.then(() => (exited = true));
  let lastError: unknown;
  while (Date.now() < deadline && !exited) {
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({
        address,
        ...options.connect,
        connectTimeout: 1_000,
      });
      await probe(connection);
      return;
    } catch (error) {
      lastError = error;
      await sleep(200);
    } finally {
      await connection?.close().catch(() => undefined);
    }
  }
  if (exited) throw new Error(`temporal server exited before it was ready`);
  throw new Error(
    `temporal server at ${address} not ready after ${options.timeoutMs} ms: ${(lastError as Error)?.message}`,
  );
}

/** `temporal server start-dev` with our search attributes registered, under a guardian. */
export async function startTemporalDevServer(options: DevServerOptions): Promise<DevServer> {
  const ip = options.ip ?? '127.0.0.1';
  const args = [
    'server',
    'start-dev',
    '--ip',
    ip,
    '--port',
    String(options.port),
    '--log-level',
    'warn',
  ];
  args.push('--dynamic-config-value', 'frontend.enableServerVersionCheck=false');
  args.push(
    '--dynamic-config-value',
    `history.timerProcessorMaxTimeShift=${JSON.stringify(TIMER_MAX_TIME_SHIFT)}`,
  );
  if (options.uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(options.uiPort));
  if (options.httpPort !== undefined) args.push('--http-port', String(options.httpPort));
  if (options.metricsPort !== undefined) args.push('--metrics-port', String(options.metricsPort));
  if (options.dbFilename) args.push('--db-filename', options.dbFilename);
  for (const key of JOB_SEARCH_ATTRIBUTES) {
    args.push('--search-attribute', `${key.name}=${SEARCH_ATTRIBUTE_TYPE_NAMES[key.type]}`);
  }
  const logFd = openSync(options.logFile, 'a');
  const proc = spawnGuarded(options.cliPath, args, { stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  const address = `${ip}:${options.port}`;
  try {
    await waitForTemporal(address, {
      timeoutMs: options.readyTimeoutMs ?? 120_000,
      exited: proc.exited,
    });
  } catch (error) {
    await proc.stop();
    throw new Error(
      `${(error as Error).message}\n--- ${options.logFile} ---\n${logTail(options.logFile)}`,
    );
  }
  return {
    address,
    uiUrl: options.uiPort === undefined ? undefined : `http://${ip}:${options.uiPort}`,
    process: proc,
    stop: () => proc.stop(),
  };
}

/**
 * A dev server on ports of its own choosing (for tests): the ports come from freePort, and a
 * start that lost a port to another process before binding it is tried again on new ones.
 */
export async function startTemporalDevServerOnFreePorts(
  options: Omit<DevServerOptions, 'port' | 'uiPort' | 'httpPort' | 'metricsPort'> & {
    withUi?: boolean;
  },
  tries = 3,
): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startTemporalDevServer({
        ...options,
        port: await freePort(),
        uiPort: options.withUi === false ? undefined : await freePort(),
        httpPort: await freePort(),
        metricsPort: await freePort(),
      });
    } catch (error) {
      if (attempt >= tries || !/address already in use/i.test((error as Error).message))
        throw error;
    }
  }
}
