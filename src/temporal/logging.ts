import type { LogLevel, LogMetadata, Logger as SdkLogger } from '@temporalio/common';
import type { Logger } from '../logger';

const PINO_LEVEL = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
} as const satisfies Record<LogLevel, string>;

/**
 * The Temporal SDK's logger, writing through ours: the worker's own lines, its workflows' and
 * activities' (their `workflowId`, `runId`, `activityId`, `taskQueue`, `sdkComponent`) and, once
 * forwarded, the Rust core's, all as one stream of JSON lines with the same redaction. An error in
 * the metadata goes under `err`, where pino serializes it.
 */
export function temporalSdkLogger(logger: Logger): SdkLogger {
  const sdk = logger.child({ component: 'temporal-sdk' });
  const log = (level: LogLevel, message: string, meta: LogMetadata = {}): void => {
    const { error, ...fields } = meta as { error?: unknown } & Record<string, unknown>;
    sdk[PINO_LEVEL[level]](error === undefined ? fields : { ...fields, err: error }, message);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
