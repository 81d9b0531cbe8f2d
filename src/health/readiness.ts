import { isGrpcServiceError, type Client } from '@temporalio/client';
import type { Queryable } from '../db/pool';
import { causeChain } from '../domain/causeChain';
import { DEFAULTS } from '../domain/defaults';
import type { Logger } from '../logger';

/** One dependency's answer to a readiness check. */
export interface DependencyCheck {
  ok: boolean;
  /** How long it took to answer (or to be given up on), in milliseconds. */
  ms: number;
  /** Why it is not ready, in words safe to show anyone: no address, no credential. */
  reason?: string;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, DependencyCheck>;
}

/** What a readiness answer that is not ready says, naming what did not answer. */
export function notReadyDetail(readiness: Readiness): string {
  const down = Object.keys(readiness.checks).filter((name) => !readiness.checks[name]!.ok);
  return `Not ready: ${down.join(' and ')} did not answer.`;
}

/** A dependency to look at: resolves when it answers, throws when it does not. */
export type Probe = () => Promise<unknown>;

/** PostgreSQL answers a query. */
export function postgresProbe(pool: Queryable): Probe {
  return () => pool.query('SELECT 1');
}

/** Temporal answers for the namespace the service uses (it exists and the frontend serves it). */
export function temporalProbe(temporal: Client, timeoutMs: number): Probe {
  return () =>
    temporal.withDeadline(Date.now() + timeoutMs, () =>
      temporal.workflowService.describeNamespace({ namespace: temporal.options.namespace }),
    );
}

/** A dependency's own account of why it is not ready, in words safe to show anyone. */
export class NotReady extends Error {}

/** The worker's own pollers take tasks (see JobWorkers.notPolling). */
export function pollersProbe(notPolling: () => string[]): Probe {
  return async () => {
    const trouble = notPolling();
    if (trouble.length > 0) throw new NotReady(trouble.join('; '));
  };
}

class ProbeTimeout extends Error {}

/**
 * Looks at every dependency at once, each given `timeoutMs`: ready only when all answer. What
 * failed is logged in full and reported in words that name no address or secret, since readiness
 * is served to anyone who can reach the port.
 */
export async function checkReadiness(
  probes: Record<string, Probe>,
  logger: Pick<Logger, 'warn'>,
  timeoutMs: number = DEFAULTS.readinessTimeoutMs,
): Promise<Readiness> {
  const entries = await Promise.all(
    Object.entries(probes).map(async ([name, probe]): Promise<[string, DependencyCheck]> => {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          probe(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new ProbeTimeout()), timeoutMs);
          }),
        ]);
        return [name, { ok: true, ms: elapsed(started) }];
      } catch (error) {
        logger.warn({ err: error, dependency: name }, 'readiness: a dependency did not answer');
        return [name, { ok: false, ms: elapsed(started), reason: reasonOf(error, timeoutMs) }];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const checks = Object.fromEntries(entries);
  return { ready: entries.every(([, check]) => check.ok), checks };
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}

/** `ECONNREFUSED`, `57P03`, `gRPC status 14`: the error's code, which names no address. */
function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof ProbeTimeout) return `no answer within ${timeoutMs} ms`;
  if (error instanceof NotReady) return error.message;
  for (const current of causeChain(error)) {
    const { code } = current as { code?: unknown };
    if (isGrpcServiceError(current)) return `gRPC status ${current.code}`;
    if (typeof code === 'string' && /^[A-Z0-9_]{3,40}$/.test(code)) return code;
  }
  return 'an error (the service log has it)';
}
