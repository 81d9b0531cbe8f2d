import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Pool } from '../db/pool';
import {
  addJobNote,
  findJob,
  finishJobWithoutResult,
  insertJobOrFindExisting,
  markJobAdmitted,
} from '../db/jobs';
import { requestFingerprint } from '../domain/fingerprint';
import { ServiceError } from '../service/errors';
import { validateIntent } from '../service/jobs';
import { findCertification } from '../db/certifications';
import {
  createAttempt,
  findAttempt,
  markAttemptRunning,
  observedP95Ms,
  settleAttemptWithoutResult,
  type AttemptRecord,
} from '../db/attempts';
import type { JobMode, TerminalJobStatus } from '../domain/job';
import { checkOutput, contractVersion, findJobType, type AnyJobTypeContract } from '../jobTypes';
import {
  ContractViolation,
  ProviderCallError,
  providerModel,
  type FailureCertainty,
} from '../providers/provider';
import type { ProviderRegistry } from '../providers/registry';
import type { Logger } from '../logger';
import {
  nudgeWorkflow,
  recordResult as sharedRecordResult,
  type AttemptOutcome,
} from '../service/results';
import type { JobWorkflowInput } from '../workflows/definitions';

export type { AttemptOutcome } from '../service/results';

export interface PlannedProvider {
  name: string;
  timeoutMs: number;
  heartbeatTimeoutMs: number;
  sideEffects: boolean;
}

export interface JobPlan {
  jobId: string;
  requestFingerprint: string;
  type: string;
  mode: JobMode;
  /** The plan, primary first. */
  providers: PlannedProvider[];
  /** Every provider that could serve this job (for a user's explicit request). */
  compatible: PlannedProvider[];
  /** Hedged mode: silence after which the next attempt starts. */
  hedgeDelayMs: number;
  /** Providers left out of the plan because they are not certified for the current contract. */
  skipped: Array<{ provider: string; reason: string }>;
  terminalStatus: TerminalJobStatus | null;
  completedBy: string | null;
}

export interface ActivityDeps {
  pool: Pool;
  providers: ProviderRegistry;
  logger: Logger;
  /** To tell a job's workflow that an attempt settled after it stopped waiting. */
  temporal: Client;
  /** Hedge delay when the primary has no observed p95 yet. */
  defaultHedgeDelayMs?: number;
  /** Require certification of the primary too (failover always requires it). */
  requireCertifiedPrimary?: boolean;
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

/** Every activity of the job workflow, bound to the worker's pool, providers and clients. */
export function createActivities(deps: ActivityDeps) {
  const { pool, providers, logger, temporal } = deps;

  const planned = (name: string): PlannedProvider => {
    const { config } = providers.get(name);
    return {
      name,
      timeoutMs: config.timeoutMs,
      heartbeatTimeoutMs: Math.min(config.timeoutMs, 10_000),
      sideEffects: config.sideEffects,
    };
  };

  async function outcomeOf(attempt: AttemptRecord): Promise<AttemptOutcome> {
    const job = await findJob(pool, attempt.jobId);
    return {
      attemptId: attempt.id,
      state: attempt.state,
      winnerAttemptId: job?.completedBy ?? null,
      jobStatus: job?.terminalStatus ?? null,
    };
  }

  async function uncertifiedReason(
    name: string,
    contract: AnyJobTypeContract,
  ): Promise<string | undefined> {
    const { config } = providers.get(name);
    const version = contractVersion(contract);
    const verdict = await findCertification(pool, {
      provider: name,
      model: providerModel(config),
      jobType: contract.name,
      contractVersion: version,
    });
    if (!verdict) return `not certified for the ${contract.name} contract ${version}`;
    if (!verdict.passed) return `failed certification for the ${contract.name} contract ${version}`;
    return undefined;
  }

  /**
   * The Temporal-native path: the workflow writes the job row itself, with the same
   * INSERT … ON CONFLICT as the API, so both paths meet on one row per (owner, key).
   */
  async function writeJobRow(input: JobWorkflowInput & { workflowId: string }) {
    const intent = input.intent;
    if (!intent) return undefined;
    let resolved: ReturnType<typeof validateIntent>;
    try {
      resolved = validateIntent(
        { providers },
        {
          type: intent.type,
          input: intent.input,
          providers: intent.providers ?? undefined,
          mode: intent.mode,
        },
      );
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      throw ApplicationFailure.create({
        type: 'InvalidJob',
        message: `${error.problemType}: ${error.message}`,
        details: [error.details],
        nonRetryable: true,
      });
    }
    const fingerprint = requestFingerprint({
      type: intent.type,
      input: resolved.input,
      providers: intent.providers,
      mode: resolved.mode,
    });
    if (input.requestFingerprint !== undefined && fingerprint !== input.requestFingerprint) {
      throw ApplicationFailure.create({
        type: 'JobIdentityMismatch',
        message: 'the intent does not match the request fingerprint',
        nonRetryable: true,
      });
    }
    const { job } = await insertJobOrFindExisting(pool, {
      ownerId: input.ownerId,
      idempotencyKey: input.idempotencyKey,
      requestFingerprint: fingerprint,
      intent: {
        type: intent.type,
        input: resolved.input,
        providers: resolved.plan,
        mode: resolved.mode,
      },
      workflowId: input.workflowId,
    });
    if (job.requestFingerprint !== fingerprint) {
      throw ApplicationFailure.create({
        type: 'IdempotencyKeyReuse',
        message:
          'this idempotency key was already used for a different request; the existing job is unchanged',
        nonRetryable: true,
      });
    }
    return job;
  }

  const recordResult = (
    attemptId: string,
    result: unknown,
    source: string,
  ): Promise<AttemptOutcome> => sharedRecordResult(pool, logger, { attemptId, result, source });

  return {
    /** Refuses to run a job whose row is missing or belongs to a different (owner, key, intent). */
    async admitJob(input: JobWorkflowInput & { workflowId: string }): Promise<JobPlan> {
      const job = input.jobId ? await findJob(pool, input.jobId) : await writeJobRow(input);
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
          [
            'requestFingerprint',
            job.requestFingerprint,
            input.requestFingerprint ?? job.requestFingerprint,
          ],
          ['workflowId', job.workflowId, input.workflowId],
          ['jobId', job.id, input.jobId ?? job.id],
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
      const contract = findJobType(job.type);
      const primary = job.providers[0];
      const p95 = primary ? await observedP95Ms(pool, primary) : undefined;
      // Failover goes only to providers certified for the contract in force.
      const plan: PlannedProvider[] = [];
      const skipped: JobPlan['skipped'] = [];
      for (const [index, name] of job.providers.entries()) {
        const mustBeCertified = index > 0 || deps.requireCertifiedPrimary === true;
        const reason =
          contract && mustBeCertified ? await uncertifiedReason(name, contract) : undefined;
        if (!reason) {
          plan.push(planned(name));
          continue;
        }
        skipped.push({ provider: name, reason });
        await addJobNote(pool, job.id, { event: 'provider_skipped', provider: name, reason });
        logger.warn({ jobId: job.id, provider: name, reason }, 'provider skipped: not certified');
      }
      return {
        jobId: job.id,
        requestFingerprint: job.requestFingerprint,
        type: job.type,
        mode: job.mode,
        providers: plan,
        skipped,
        compatible: contract ? providers.compatible(contract.providerKinds).map(planned) : [],
        hedgeDelayMs: p95 ?? deps.defaultHedgeDelayMs ?? 2_000,
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
     * One provider call for one attempt, never retried. The answer is checked against the job
     * type's contract and recorded through the compare-and-swap here, so an answer that comes
     * after the attempt timed out (this code keeps running in the worker) takes the very same
     * path and then nudges the workflow. A deliberate cancel does not abort the request either:
     * once sent, the provider may do the work anyway, and a late answer is recorded as a loss.
     */
    async callProvider(input: { attemptId: string }): Promise<AttemptOutcome> {
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
        await settleAttemptWithoutResult(pool, attempt.id, 'failed', { code: 'no_contract' });
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
      const started = Date.now();
      const isLate = (): boolean => Date.now() - started >= context.info.startToCloseTimeoutMs;

      const heartbeat = setInterval(() => context.heartbeat(), 1_000);
      let output: unknown;
      let failure: ProviderCallError | undefined;
      let violation: ContractViolation | undefined;
      try {
        output = (await provider.call({ attemptId: attempt.id, contract, input: job.input }))
          .output;
      } catch (error) {
        if (error instanceof ContractViolation) violation = error;
        else if (error instanceof ProviderCallError) failure = error;
        else
          failure = new ProviderCallError(
            `provider call threw: ${(error as Error).message}`,
            'ambiguous',
            'unexpected',
          );
      } finally {
        clearInterval(heartbeat);
      }

      let outcome: AttemptOutcome;
      let errorToThrow: ApplicationFailure | undefined;
      if (failure) {
        log.warn(
          { certainty: failure.certainty, code: failure.code, late: isLate() },
          'provider call failed',
        );
        const details = {
          code: failure.code,
          httpStatus: failure.httpStatus,
          message: failure.message,
        };
        // A definite failure settles the attempt; an ambiguous one leaves it unknown.
        const settled = await settleAttemptWithoutResult(
          pool,
          attempt.id,
          failure.certainty === 'definite' ? 'failed' : 'unknown',
          details,
        );
        outcome = await outcomeOf(settled);
        errorToThrow = providerFailure(failure.certainty, failure.message, details);
      } else {
        const checked = violation
          ? { ok: false as const, reason: violation.message, issues: [violation.message] }
          : checkOutput(contract, job.input, output, { attemptId: attempt.id });
        if (checked.ok) {
          outcome = await recordResult(
            attempt.id,
            checked.output,
            isLate() ? 'late-result' : 'provider',
          );
        } else {
          // A broken contract is a definite failure; the raw answer stays on the attempt, never on the job.
          log.warn(
            { code: 'contract_violation', issues: checked.issues },
            'provider output rejected',
          );
          const details = {
            code: 'contract_violation',
            message: checked.reason,
            issues: checked.issues,
          };
          const raw = violation ? violation.rawOutput : output;
          outcome = await outcomeOf(
            await settleAttemptWithoutResult(pool, attempt.id, 'failed', details, raw),
          );
          errorToThrow = providerFailure('definite', checked.reason, details);
        }
      }
      if (isLate() || context.cancellationSignal.aborted)
        await nudgeWorkflow(temporal, logger, job.workflowId, attempt.id);
      if (errorToThrow) throw errorToThrow;
      return outcome;
    },

    /** After a timeout or an unclear failure: `unknown` (never `failed`), unless it already settled. */
    async settleAttempt(input: {
      attemptId: string;
      state: 'failed' | 'unknown';
      error: Record<string, unknown>;
    }): Promise<AttemptOutcome> {
      return outcomeOf(
        await settleAttemptWithoutResult(pool, input.attemptId, input.state, input.error),
      );
    },

    /**
     * Looks again at an unknown attempt: a late answer may have settled it, or the provider's
     * status lookup may now answer for its idempotency key.
     */
    async reconcileAttempt(input: {
      attemptId: string;
    }): Promise<AttemptOutcome & { detail?: string }> {
      const attempt = await findAttempt(pool, input.attemptId);
      if (!attempt) throw new Error(`attempt ${input.attemptId} does not exist`);
      if (attempt.state !== 'unknown') return outcomeOf(attempt);
      const provider = providers.get(attempt.provider);
      if (!provider.lookupStatus)
        return { ...(await outcomeOf(attempt)), detail: 'provider has no status lookup' };
      const status = await provider.lookupStatus(attempt.id);
      if (status.state === 'unknown')
        return { ...(await outcomeOf(attempt)), detail: status.detail };
      if (status.state === 'not_found') {
        logger.info(
          { jobId: attempt.jobId, attemptId: attempt.id },
          'provider says the attempt was never processed',
        );
        return outcomeOf(
          await settleAttemptWithoutResult(pool, attempt.id, 'failed', {
            code: 'never_processed',
            message: 'the provider status lookup says this idempotency key was never processed',
          }),
        );
      }
      const job = await findJob(pool, attempt.jobId);
      const contract = job && findJobType(job.type);
      const checked = contract
        ? checkOutput(contract, job.input, status.output, { attemptId: attempt.id })
        : undefined;
      if (!checked?.ok) {
        // It happened, but the answer breaks the contract: an operator has to look at it.
        return { ...(await outcomeOf(attempt)), detail: checked ? checked.reason : 'no contract' };
      }
      return recordResult(attempt.id, checked.output, 'status-lookup');
    },

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
        throw ApplicationFailure.create({
          type: 'AttemptNotResolvable',
          message: `no attempt ${input.attemptId}`,
          nonRetryable: true,
        });
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
        return outcomeOf(
          await settleAttemptWithoutResult(pool, attempt.id, 'failed', {
            code: 'operator',
            operator: input.operator,
            message: input.reason,
          }),
        );
      }
      const job = await findJob(pool, attempt.jobId);
      const contract = job && findJobType(job.type);
      const checked = contract
        ? checkOutput(contract, job.input, input.result, { attemptId: attempt.id })
        : undefined;
      if (!checked?.ok) {
        throw ApplicationFailure.create({
          type: 'InvalidResult',
          message: `the result does not satisfy the ${job?.type} contract: ${checked?.reason ?? 'no contract'}`,
          nonRetryable: true,
        });
      }
      return recordResult(attempt.id, checked.output, `operator:${input.operator}`);
    },

    async cancelJob(input: {
      jobId: string;
      reason: string;
      operator: string;
    }): Promise<TerminalJobStatus | null> {
      const job = await finishJobWithoutResult(pool, input.jobId, 'cancelled', {
        code: 'cancelled',
        operator: input.operator,
        reason: input.reason,
      });
      logger.info(
        {
          jobId: job.id,
          operator: input.operator,
          reason: input.reason,
          status: job.terminalStatus,
        },
        'job cancelled',
      );
      return job.terminalStatus;
    },

    async failJob(input: {
      jobId: string;
      failure: Record<string, unknown>;
    }): Promise<TerminalJobStatus | null> {
      return (await finishJobWithoutResult(pool, input.jobId, 'failed', input.failure))
        .terminalStatus;
    },
  };
}

export type JobActivities = ReturnType<typeof createActivities>;
