/**
 * What every CLI command runs with: a database pool (and Temporal) per run, closed when it ends;
 * output as JSON or a table; and who acts, for the record.
 */
import { Client, Connection } from '@temporalio/client';
import { taskQueueSetting } from '../config';
import { createPool, type Pool } from '../db/pool';
import { CURRENCY_CODE } from '../domain/cost';
import { terminalText } from '../domain/displayText';
import { createLogger, type Logger } from '../logger';
import { providerConfigsFromEnv } from '../providers/registry';
import type { AttemptServiceDeps } from '../service/attempts';
import { webhookRetrySettings } from '../settings/webhooks';
import { temporalConnectionSettings, temporalConnectOptions } from '../temporal/connection';
import { chooseDatabase, explainConnectionFailure } from './database';
import { terminalJson } from './terminal';

/** One database pool per command run, closed when it ends; for commands that need no Temporal. */
export async function withPool<T>(work: (pool: Pool) => Promise<T>): Promise<T> {
  const choice = chooseDatabase();
  if (choice.notice) console.error(`onejob: ${choice.notice}`);
  const pool = createPool(choice.url, { max: 2 });
  try {
    return await work(pool);
  } catch (error) {
    throw explainConnectionFailure(error, choice);
  } finally {
    await pool.end();
  }
}

/**
 * One database pool and Temporal client per command run, closed when it ends; with the job task
 * queue and webhook retries the services are configured with (for a job that has no workflow,
 * the CLI starts its webhook senders itself).
 */
export async function withServices<T>(work: (deps: AttemptServiceDeps) => Promise<T>): Promise<T> {
  return withPool(async (pool) => {
    const settings = temporalConnectionSettings();
    const connection = await Connection.connect(temporalConnectOptions(settings));
    try {
      const temporal = new Client({ connection, namespace: settings.namespace });
      return await work({
        pool,
        temporal,
        logger: cliLogger(),
        taskQueue: taskQueueSetting(),
        webhookRetry: webhookRetrySettings(),
      });
    } finally {
      await connection.close();
    }
  });
}

/** The CLI's logger: quiet (warnings and errors) unless LOG_LEVEL says otherwise. */
export function cliLogger(): Logger {
  return createLogger('onejob-cli', process.env.LOG_LEVEL ?? 'warn');
}

export function output(json: boolean | undefined, value: unknown, table: () => string): void {
  // What providers, models and owners wrote is shown, never obeyed by the terminal.
  console.log(json ? terminalJson(value) : terminalText(table()));
}

/** Who acts, for the record: --operator, else the shell's user. */
export const operatorName = (given?: string): string => given ?? process.env.USER ?? 'cli';

/** A number option of at least `least`, or a one-line refusal naming the option. */
export function numberAtLeast(option: string, text: string, least: number): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < least)
    throw new Error(`${option} must be a number of at least ${least}, not ${JSON.stringify(text)}`);
  return value;
}

/** A currency option: an ISO 4217 code, or a one-line refusal. */
export function currencyCode(text: string): string {
  if (!CURRENCY_CODE.test(text))
    throw new Error(`--currency must be an ISO 4217 code such as USD, not ${JSON.stringify(text)}`);
  return text;
}

/** A time option: an ISO 8601 time, or a one-line refusal naming the option. */
export function timeOption(option: string, text: string): Date {
  const at = new Date(text);
  if (Number.isNaN(at.getTime()))
    throw new Error(`${option} takes an ISO 8601 time, not ${JSON.stringify(text)}`);
  return at;
}

/** The providers this shell is configured with, or none when it has no provider settings. */
export function configuredProviders(): string[] {
  try {
    return providerConfigsFromEnv().map((config) => config.name);
  } catch {
    return [];
  }
}
