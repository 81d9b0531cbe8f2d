import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { type CallLedger } from '../db/attemptCalls';
import { type AttemptRecord } from '../db/attempts';
import { recordAttemptResultAndRead } from '../db/compareAndSwap';
import { finishJobWithoutResult, type EndedJob } from '../db/endedJobs';
import { findJob, type JobRecord } from '../db/jobs';
import type { Pool, Queryable } from '../db/pool';
import type { Logger } from '../logger';
import { observe, type JobEndMetrics } from '../telemetry/histograms';
import { inSpan } from '../telemetry/spans';
import {
  attemptSettledSignal,
  type AttemptOutcome,
  type AttemptSummary,
} from '../workflows/definitions';
import { startEventSenders, type SenderStartDeps } from './webhookSenders';

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

/** What recording a result, or ending a job without one, needs. */
export interface RecordingDeps {
  pool: Pool;
  logger: Logger;
  /** Where the end of a job this process ends is observed; none, not observed. */
  metrics?: JobEndMetrics | undefined;
}

/** A job this process just ended: its duration, once (the statement that ended it says so). */
function observeJobEnd(deps: Pick<RecordingDeps, 'metrics'>, ended: EndedJob): void {
  if (deps.metrics)
    observe(deps.metrics.jobSeconds, { type: ended.type, status: ended.status }, ended.seconds);
}

/**
 * Ends a job without a result (failed, cancelled), unless something ended it first: the job as
 * it is then. The other way a job ends, beside recordResult's compare-and-swap.
 */
export async function endJobWithoutResult(
  deps: Pick<RecordingDeps, 'pool' | 'metrics'>,
  jobId: string,
  status: 'failed' | 'cancelled',
  failure: Record<string, unknown>,
  /** Only while no attempt of the job is in flight: else the job is left open. */
  nothingInFlight = false,
): Promise<JobRecord> {
  const { job, ended } = await finishJobWithoutResult(
    deps.pool,
    jobId,
    status,
    failure,
    nothingInFlight,
  );
  if (ended) observeJobEnd(deps, ended);
  return job;
}

/**
 * The compare-and-swap, and what follows from it: a loss is logged as a race. Every path that
 * has a result for an attempt (on time, late, status lookup, callback, operator) comes here, so
 * there is exactly one way a result reaches a job.
 */
export async function recordResult(
  deps: RecordingDeps,
  input: {
    attemptId: string;
    result: unknown;
    source: string;
    /** The ledger line of the provider call that brought the result, if one did (its token). */
    callEnd?: Omit<CallLedger, 'outcome'> & { token: string };
  },
): Promise<AttemptOutcome> {
  return inSpan(
    'compare-and-swap',
    { 'onejob.attempt_id': input.attemptId, 'onejob.result_source': input.source },
    async (span) => {
      const recorded = await recordAttemptResultAndRead(deps.pool, {
        attemptId: input.attemptId,
        result: input.result,
        ...(input.callEnd ? { callEnd: input.callEnd } : {}),
      });
      // A lost race is the answer's end, not an error: the span says which, and who won.
      span.setAttributes({
        'onejob.job_id': recorded.attempt.jobId,
        'onejob.cas': recorded.outcome.outcome,
        ...(recorded.outcome.outcome === 'lost' && recorded.outcome.winnerAttemptId
          ? { 'onejob.winner_attempt_id': recorded.outcome.winnerAttemptId }
          : {}),
      });
      if (recorded.outcome.outcome === 'won' && recorded.outcome.ended)
        observeJobEnd(deps, recorded.outcome.ended);
      return afterRecording(deps.pool, deps.logger, input.source, recorded);
    },
  );
}

/** What follows the compare-and-swap: a loss logged as a race, then the attempt's outcome. */
async function afterRecording(
  pool: Pool,
  logger: Logger,
  source: string,
  { outcome, attempt, job }: Awaited<ReturnType<typeof recordAttemptResultAndRead>>,
): Promise<AttemptOutcome> {
  const log = logger.child({
    jobId: attempt.jobId,
    attemptId: attempt.id,
    workflowId: job?.workflowId,
    source,
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
 * What became of a nudge: the workflow was told; it has closed and waits for nothing (the
 * database already has the truth); or Temporal could not be told.
 */
export type Nudge = 'told' | 'closed' | 'unreachable';

/** Tells a job's workflow to look at an attempt again (it may be waiting on it). */
export async function nudgeWorkflow(
  temporal: Client,
  logger: Logger,
  workflowId: string,
  attemptId: string,
): Promise<Nudge> {
  try {
    await temporal.workflow.getHandle(workflowId).signal(attemptSettledSignal, { attemptId });
    return 'told';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'closed';
    logger.debug({ err: error, workflowId, attemptId }, 'workflow not nudged');
    return 'unreachable';
  }
}

/**
 * Tells the job's workflow that an attempt settled; when no workflow runs the job any more,
 * whatever the settling wrote for the owner's webhooks (an ending, a late result) is handed to
 * its senders here, since no workflow will. A closed workflow counts as told.
 */
export async function nudgeOrHandOver(
  deps: SenderStartDeps,
  job: { id: string; workflowId: string },
  attemptId: string,
): Promise<Nudge> {
  const nudge = await nudgeWorkflow(deps.temporal, deps.logger, job.workflowId, attemptId);
  if (nudge === 'closed') await startEventSenders(deps, job.id);
  return nudge;
}
