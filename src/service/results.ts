import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { type CallLedger } from '../db/attemptCalls';
import { type AttemptRecord } from '../db/attempts';
import { recordAttemptResultAndRead } from '../db/compareAndSwap';
import { findJob, type JobRecord } from '../db/jobs';
import type { Pool, Queryable } from '../db/pool';
import type { Logger } from '../logger';
import {
  attemptSettledSignal,
  type AttemptOutcome,
  type AttemptSummary,
} from '../workflows/definitions';

/** An attempt as the workflow and its clients see it. */
export function attemptSummary(attempt: AttemptRecord): AttemptSummary {
  return {
    attemptId: attempt.id,
    seq: attempt.seq,
    provider: attempt.provider,
    state: attempt.state,
  };
}

/** The outcome of an attempt as the database has it now. */
export async function attemptOutcome(
  db: Queryable,
  attempt: AttemptRecord,
  /** The attempt's job, when the caller has just read it. */
  knownJob?: JobRecord,
): Promise<AttemptOutcome> {
  const job = knownJob ?? (await findJob(db, attempt.jobId));
  return {
    attemptId: attempt.id,
    state: attempt.state,
    winnerAttemptId: job?.completedBy ?? null,
    jobStatus: job?.terminalStatus ?? null,
    ...(attempt.error && typeof attempt.error === 'object'
      ? { error: attempt.error as Record<string, unknown> }
      : {}),
    ...(attempt.cost ? { cost: attempt.cost } : {}),
  };
}

/**
 * The compare-and-swap, and what follows from it: a loss is logged as a race. Every path that
 * has a result for an attempt (on time, late, status lookup, callback, operator) comes here, so
 * there is exactly one way a result reaches a job.
 */
export async function recordResult(
  pool: Pool,
  logger: Logger,
  input: {
    attemptId: string;
    result: unknown;
    source: string;
    /** The ledger line of the provider call that brought the result, if one did. */
    callEnd?: Omit<CallLedger, 'outcome'>;
  },
): Promise<AttemptOutcome> {
  const { outcome, attempt, job } = await recordAttemptResultAndRead(pool, {
    attemptId: input.attemptId,
    result: input.result,
    ...(input.callEnd ? { callEnd: input.callEnd } : {}),
  });
  const log = logger.child({
    jobId: attempt.jobId,
    attemptId: attempt.id,
    workflowId: job?.workflowId,
    source: input.source,
  });
  if (outcome.outcome === 'lost') {
    log.warn(
      {
        event: 'race_lost',
        winnerAttemptId: outcome.winnerAttemptId,
        expectedVersion: outcome.expectedVersion,
        observedVersion: outcome.observedVersion,
        jobStatus: job?.terminalStatus,
      },
      'result discarded: the job was already settled by another attempt or ended',
    );
  } else {
    log.info({ event: 'result_recorded', version: outcome.version }, 'result recorded');
  }
  return attemptOutcome(pool, attempt, job);
}

/**
 * Tells a job's workflow to look at an attempt again (it may be waiting on it). Says whether
 * that is done: the signal was delivered, or the workflow has closed and waits for nothing (the
 * database already has the truth). False when Temporal could not be told.
 */
export async function nudgeWorkflow(
  temporal: Client,
  logger: Logger,
  workflowId: string,
  attemptId: string,
): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(workflowId).signal(attemptSettledSignal, { attemptId });
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return true;
    logger.debug({ err: error, workflowId, attemptId }, 'workflow not nudged');
    return false;
  }
}
