import type { Client } from '@temporalio/client';
import { claimDueChecks, turnAgain, wakeDone, type DueCheck } from '../db/attemptChecks';
import type { Pool } from '../db/pool';
import type { WebhookRetry } from '../domain/webhooks';
import type { Logger } from '../logger';
import { observe, type WorkerMetrics } from '../telemetry/histograms';
import type { AttemptLook } from '../workflows/definitions';
import { nudgeOrHandOver, nudgeWorkflow } from './results';

/**
 * How long a claimed turn holds off other workers (one whose worker died is taken again after
 * it); a look that outlives it may meet a second look, which is harmless.
 */
const CLAIM_LEASE_MS = 20_000;
/** A look or wake-up that failed (Temporal or a provider unreachable) is tried again this soon. */
const RETRY_MS = 2_000;
/** Turns taken per round, and run at once (a look may ask a provider's status lookup). */
const BATCH = 50;
const AT_ONCE = 8;

export interface RecheckReport {
  looked: number;
  /** Settled attempts whose workflows were woken (by a look here, or by any other path). */
  woken: number;
  /** Found to need an operator for the first time; their workflows were woken to say so. */
  needOperator: number;
  failed: number;
}

/**
 * One round of the reconciler. Attempts whose turn has come (migration 0014) are of two kinds:
 * - unknown, with a look due: looked at here, in the worker, while the workflow sleeps; the
 *   look writes when the next is due;
 * - settled while a workflow may sleep on them (here, or by a late answer, a callback, an
 *   operator): the workflow is woken (nudged), and only then is the turn cleared, so a wake-up
 *   that a killed worker never sent is sent by the next round of any worker.
 * A workflow is also woken when a look first finds that only an operator can settle the
 * attempt. Rounds go on while whole batches are due.
 */
export async function recheckDueAttempts(
  deps: {
    pool: Pool;
    temporal: Client;
    /** Where the senders of a job's webhooks run, and how they retry (for jobs without a workflow). */
    taskQueue: string;
    retry: WebhookRetry;
    /** The providers this worker can ask; another worker takes the rest. */
    providers: string[];
    lookAgain: (input: { attemptId: string }) => Promise<AttemptLook>;
    /** Where the time each settled attempt spent unknown is observed. */
    metrics?: Pick<WorkerMetrics, 'unknownSeconds'> | undefined;
  },
  logger: Logger,
): Promise<RecheckReport> {
  const report: RecheckReport = { looked: 0, woken: 0, needOperator: 0, failed: 0 };
  const senders = { ...deps, logger };
  const takeTurn = async ({ attemptId, jobId, workflowId, settled }: DueCheck): Promise<void> => {
    if (!settled) {
      report.looked += 1;
      const { outcome, operatorNewlyNeeded } = await deps.lookAgain({ attemptId });
      if (outcome.state === 'unknown') {
        if (operatorNewlyNeeded) {
          report.needOperator += 1;
          await nudgeWorkflow(deps.temporal, logger, workflowId, attemptId);
        }
        return;
      }
    }
    // A job that ended without its workflow (a cancel with none, a terminated run) has what the
    // settling wrote for its webhooks (a late result) handed to their senders here.
    if ((await nudgeOrHandOver(senders, { id: jobId, workflowId }, attemptId)) !== 'unreachable') {
      report.woken += 1;
      // Every settling of an unknown attempt, by whatever path, passes here once (migration 0014).
      const settled = await wakeDone(deps.pool, attemptId);
      if (settled && deps.metrics)
        observe(
          deps.metrics.unknownSeconds,
          { provider: settled.provider, settled_as: settled.state },
          settled.unknownSeconds,
        );
    } else {
      report.failed += 1;
      await turnAgain(deps.pool, attemptId, RETRY_MS);
    }
  };
  for (;;) {
    const due = await claimDueChecks(deps.pool, {
      limit: BATCH,
      leaseMs: CLAIM_LEASE_MS,
      providers: deps.providers,
    });
    let next = 0;
    const takeNext = async (): Promise<void> => {
      while (next < due.length) {
        const turn = due[next++]!;
        await takeTurn(turn).catch(async (error: unknown) => {
          report.failed += 1;
          logger.error(
            { err: error, attemptId: turn.attemptId, workflowId: turn.workflowId },
            'could not look at an unknown attempt or wake its workflow',
          );
          // The database may be what failed: then the claim's lease brings it back.
          await turnAgain(deps.pool, turn.attemptId, RETRY_MS).catch(() => undefined);
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(AT_ONCE, due.length) }, takeNext));
    if (due.length < BATCH) return report;
  }
}
