import { operatorsFailure, reportAttemptFailure } from '../db/attemptFailureReports';
import { findAttempt } from '../db/attempts';
import { findJob } from '../db/jobs';
import { FAILURES, typedFailure } from '../domain/failures';
import { checkJobResult } from '../jobTypes';
import {
  attemptOutcome,
  attemptSummary,
  endJobWithoutResult,
  recordResult,
} from '../service/results';
import {
  cancellationRecord,
  type AttemptOutcome,
  type CancelJobInput,
  type JobEnding,
} from '../workflows/definitions';
import { settledMeanwhileRefusal } from '../workflows/policy';
import type { ActivityDeps } from './types';

/** What operators decide, and how a job ends without a result. */
export function verdictActivities(deps: Pick<ActivityDeps, 'pool' | 'logger' | 'metrics'>) {
  const { pool, logger } = deps;

  async function finish(
    jobId: string,
    status: 'failed' | 'cancelled',
    failure: Record<string, unknown>,
  ): Promise<JobEnding> {
    const job = await endJobWithoutResult(deps, jobId, status, failure);
    // Another outcome may have been recorded first (a winner, an earlier cancel): report that one.
    return { status: job.terminalStatus ?? status, completedBy: job.completedBy };
  }

  return {
    /** An operator's out-of-band verdict on an unknown attempt. A result still goes through the CAS. */
    async resolveAttempt(input: {
      attemptId: string;
      outcome: 'failed' | 'succeeded';
      reason: string;
      result?: unknown;
      operator: string;
    }): Promise<AttemptOutcome> {
      const attempt = await findAttempt(pool, input.attemptId);
      if (!attempt)
        throw typedFailure(FAILURES.attemptNotResolvable, `no attempt ${input.attemptId}`);
      // The row decides, not the workflow's view of it: a late answer may have settled the
      // attempt while its nudge to the workflow was still on the way.
      const settled = settledMeanwhileRefusal(attemptSummary(attempt));
      if (settled) throw typedFailure(settled.type, settled.message);
      logger.info(
        {
          jobId: attempt.jobId,
          attemptId: attempt.id,
          operator: input.operator,
          outcome: input.outcome,
          reason: input.reason,
        },
        'operator resolves attempt',
      );
      if (input.outcome === 'failed') {
        // Applied once the call can no longer land; held until then (a success answer that
        // comes meanwhile outranks it).
        return attemptOutcome(
          pool,
          await reportAttemptFailure(
            pool,
            attempt.id,
            operatorsFailure(input.operator, input.reason),
          ),
        );
      }
      const job = await findJob(pool, attempt.jobId);
      const checked = job && checkJobResult(job, input.result, attempt.id);
      if (!checked?.ok) {
        throw typedFailure(
          FAILURES.invalidResult,
          `the result does not satisfy the ${job?.type} contract: ${checked?.reason ?? 'no contract'}`,
        );
      }
      return recordResult(deps, {
        attemptId: attempt.id,
        result: checked.output,
        source: `operator:${input.operator}`,
      });
    },

    async cancelJob(input: { jobId: string } & CancelJobInput): Promise<JobEnding> {
      const { jobId, ...cancel } = input;
      const record = cancellationRecord(cancel);
      const ending = await finish(jobId, 'cancelled', record);
      logger.info({ jobId, ...record, ...ending }, 'job cancelled');
      return ending;
    },

    async failJob(input: { jobId: string; failure: Record<string, unknown> }): Promise<JobEnding> {
      return finish(input.jobId, 'failed', input.failure);
    },
  };
}
