import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Pool } from '../db/pool';
import { findJob, finishJobWithoutResult, markJobAdmitted } from '../db/jobs';
import {
  createAttempt,
  findAttempt,
  markAttemptRunning,
  recordAttemptResult,
  settleAttemptWithoutResult,
  type RecordResultOutcome,
} from '../db/attempts';
import type { AttemptState, JobMode, TerminalJobStatus } from '../domain/job';
import { findJobType } from '../jobTypes';
import { ProviderCallError, type FailureCertainty } from '../providers/provider';
import type { ProviderRegistry } from '../providers/registry';
import type { Logger } from '../logger';
import type { JobWorkflowInput } from '../workflows/definitions';

export interface PlannedProvider {
  name: string;
  timeoutMs: number;
  sideEffects: boolean;
}

export interface JobPlan {
  jobId: string;
  type: string;
  mode: JobMode;
  providers: PlannedProvider[];
  terminalStatus: TerminalJobStatus | null;
  completedBy: string | null;
}

export interface ActivityDeps {
  pool: Pool;
  providers: ProviderRegistry;
  logger: Logger;
}

function providerFailure(
  certainty: FailureCertainty,
  message: string,
  details: Record<string, unknown>,
): ApplicationFailure {
  return ApplicationFailure.create({
    type: certainty === 'definite' ? 'ProviderFailureDefinite' : 'ProviderFailureAmbiguous',
    message,
    details: [details],
    nonRetryable: true,
  });
}

/** Every activity of the job workflow, bound to the worker's pool, providers and logger. */
export function createActivities({ pool, providers, logger }: ActivityDeps) {
  return {
    /** Refuses to run a job whose row is missing or belongs to a different (owner, key, intent). */
    async admitJob(input: JobWorkflowInput & { workflowId: string }): Promise<JobPlan> {
      const job = await findJob(pool, input.jobId);
      if (!job) {
        throw ApplicationFailure.create({
          type: 'JobMissing',
          message: `job ${input.jobId} does not exist`,
          nonRetryable: true,
        });
      }
      const mismatched = (
        [
          ['ownerId', job.ownerId, input.ownerId],
          ['idempotencyKey', job.idempotencyKey, input.idempotencyKey],
          ['requestFingerprint', job.requestFingerprint, input.requestFingerprint],
          ['workflowId', job.workflowId, input.workflowId],
        ] as const
      )
        .filter(([, stored, given]) => stored !== given)
        .map(([field]) => field);
      if (mismatched.length > 0) {
        throw ApplicationFailure.create({
          type: 'JobIdentityMismatch',
          message: `job ${input.jobId} does not match this workflow (${mismatched.join(', ')})`,
          nonRetryable: true,
        });
      }
      await markJobAdmitted(pool, job.id);
      return {
        jobId: job.id,
        type: job.type,
        mode: job.mode,
        providers: job.providers.map((name) => {
          const { config } = providers.get(name);
          return { name, timeoutMs: config.timeoutMs, sideEffects: config.sideEffects };
        }),
        terminalStatus: job.terminalStatus,
        completedBy: job.completedBy,
      };
    },

    async startAttempt(input: {
      jobId: string;
      seq: number;
      provider: string;
      exclusive: boolean;
    }) {
      const attempt = await createAttempt(pool, input);
      return { id: attempt.id, state: attempt.state };
    },

    /**
     * One provider call for one attempt. Runs at most once (the workflow gives it no retries);
     * heartbeats so that cancellation reaches it; checks the output against the job type's contract.
     */
    async callProvider(input: { attemptId: string }): Promise<unknown> {
      const context = Context.current();
      const attempt = await markAttemptRunning(pool, input.attemptId);
      if (attempt.state !== 'running') {
        throw providerFailure(
          'definite',
          `attempt ${attempt.id} is ${attempt.state}; nothing was sent`,
          { code: 'not_running' },
        );
      }
      const job = await findJob(pool, attempt.jobId);
      const contract = job && findJobType(job.type);
      if (!job || !contract) {
        throw providerFailure(
          'definite',
          `job type of ${attempt.id} is unknown; nothing was sent`,
          { code: 'no_contract' },
        );
      }
      const provider = providers.get(attempt.provider);
      const log = logger.child({
        jobId: job.id,
        attemptId: attempt.id,
        workflowId: job.workflowId,
        provider: provider.config.name,
      });

      const heartbeat = setInterval(() => context.heartbeat(), 1_000);
      let content: string;
      try {
        const response = await provider.call({
          attemptId: attempt.id,
          messages: contract.prompt(job.input),
          signal: context.cancellationSignal,
        });
        content = response.content;
      } catch (error) {
        const failure =
          error instanceof ProviderCallError
            ? error
            : new ProviderCallError(
                `provider call threw: ${(error as Error).message}`,
                'ambiguous',
                'unexpected',
              );
        log.warn({ certainty: failure.certainty, code: failure.code }, 'provider call failed');
        throw providerFailure(failure.certainty, failure.message, {
          code: failure.code,
          httpStatus: failure.httpStatus,
        });
      } finally {
        clearInterval(heartbeat);
      }

      let parsed: unknown;
      try {
        parsed = JSON.parse(content);
      } catch {
        throw providerFailure('definite', 'provider output is not JSON', {
          code: 'contract_violation',
        });
      }
      const checked = contract.output.safeParse(parsed);
      if (!checked.success) {
        const issues = checked.error.issues.map(
          (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
        );
        throw providerFailure(
          'definite',
          `provider output breaks the contract: ${issues.join('; ')}`,
          { code: 'contract_violation', issues },
        );
      }
      const reason = contract.check(job.input, checked.data);
      if (reason)
        throw providerFailure('definite', `provider output rejected: ${reason}`, {
          code: 'contract_violation',
        });
      return checked.data;
    },

    async settleAttempt(input: {
      attemptId: string;
      state: 'failed' | 'unknown' | 'cancelled';
      error: Record<string, unknown>;
    }): Promise<{ state: AttemptState }> {
      const attempt = await settleAttemptWithoutResult(
        pool,
        input.attemptId,
        input.state,
        input.error,
      );
      return { state: attempt.state };
    },

    /** The compare-and-swap. A loss is logged and recorded; the losing payload goes nowhere. */
    async recordResult(input: {
      attemptId: string;
      output: unknown;
    }): Promise<RecordResultOutcome & { jobStatus: TerminalJobStatus | null }> {
      const outcome = await recordAttemptResult(pool, {
        attemptId: input.attemptId,
        result: input.output,
      });
      const attempt = await findAttempt(pool, input.attemptId);
      const job = attempt && (await findJob(pool, attempt.jobId));
      if (outcome.outcome === 'lost') {
        logger.warn(
          {
            event: 'race_lost',
            jobId: attempt?.jobId,
            attemptId: outcome.attemptId,
            winnerAttemptId: outcome.winnerAttemptId,
            expectedVersion: outcome.expectedVersion,
            observedVersion: outcome.observedVersion,
            workflowId: job?.workflowId,
          },
          'late result discarded: another attempt already settled the job',
        );
      }
      return { ...outcome, jobStatus: job?.terminalStatus ?? null };
    },

    async failJob(input: { jobId: string; failure: Record<string, unknown> }): Promise<void> {
      await finishJobWithoutResult(pool, input.jobId, 'failed', input.failure);
    },
  };
}

export type JobActivities = ReturnType<typeof createActivities>;
