import { settleAbandonedAttempt } from '../db/attemptCalls';
import {
  AttemptInFlightError,
  createAttempt,
  JobNotOpenError,
  ProviderUnavailableError,
  listAttempts,
  type AttemptRecord,
} from '../db/attempts';
import { findCertificationsForContract } from '../db/certifications';
import {
  addJobNote,
  addJobNotes,
  findJob,
  insertJobOrFindExisting,
  KeyReleasedError,
  findJobByKey,
  latestJobOfKey,
  markJobAdmitted,
  type JobRecord,
} from '../db/jobs';
import { inTransaction, type Queryable } from '../db/pool';
import { observedP95Ms } from '../db/providerStats';
import { FAILURES, KEY_REUSE_MESSAGE, typedFailure } from '../domain/failures';
import { jobIdentityProblem } from '../domain/identity';
import type { JobMode } from '../domain/job';
import { intentShapeRefusal } from '../domain/jsonShape';
import { retrySettings, type FailedCall } from '../domain/retries';
import { jobWorkflowId, parseJobWorkflowId } from '../domain/workflowId';
import { contractVersion, findJobType, type AnyJobTypeContract } from '../jobTypes';
import { breakerCoolOffMs, providerModel } from '../providers/provider';
import { ServiceError } from '../service/errors';
import { validateIntent } from '../service/intent';
import { attemptSummary } from '../service/results';
import type {
  AdmittedJob,
  AttemptSummary,
  JobWorkflowInput,
  KeyJobs,
  KeyJobsInput,
  LastFailure,
} from '../workflows/definitions';
import { hedgeBudgetGuard } from './hedgeBudget';
import { type ActivityDeps, type JobPlan, type PlannedProvider } from './types';

type AdmissionInput = JobWorkflowInput & { workflowId: string; startFirstAttempt?: boolean };

/**
 * The job's last attempt when it failed and the job is open, as a new run weighs it for a retry
 * (policy.ts resumedRetry): what its record says of its failure, and when the run that made it
 * planned to try again, if it noted that before it closed.
 */
function lastFailureOf(
  job: JobRecord,
  attempts: readonly AttemptRecord[],
): LastFailure | undefined {
  const last = attempts.at(-1);
  if (!last || last.state !== 'failed' || job.terminalStatus) return undefined;
  const error = (last.error ?? {}) as Record<string, unknown>;
  const noted = [...job.notes]
    .reverse()
    .find(
      (note) =>
        (note as { event?: unknown }).event === 'retry_scheduled' &&
        (note as { afterAttempt?: unknown }).afterAttempt === last.id,
    ) as { retryAt?: unknown } | undefined;
  const detail = error.provider;
  return {
    attemptId: last.id,
    failure: {
      code: error.code,
      httpStatus: error.httpStatus,
      ...(typeof detail === 'object' && detail !== null
        ? { provider: detail as FailedCall['provider'] }
        : {}),
    },
    ...(typeof noted?.retryAt === 'string' ? { retryAt: noted.retryAt } : {}),
  };
}

type AdmissionDeps = Pick<
  ActivityDeps,
  | 'metrics'
  | 'pool'
  | 'providers'
  | 'logger'
  | 'defaultHedgeDelayMs'
  | 'requireCertifiedPrimary'
  | 'maxAttemptsPerJob'
  | 'historyEventLimit'
  | 'reconcileMaxDelayMs'
  | 'reconcileFirstDelayMs'
  | 'blockedSelfLookMs'
  | 'needsOperatorAfterMs'
  | 'hedgeBudget'
>;

/** The key generation a job workflow id names; undefined when it is no job workflow id. */
function generationOfWorkflowId(workflowId: string): number | undefined {
  try {
    return parseJobWorkflowId(workflowId).generation;
  } catch {
    return undefined;
  }
}

/** Admission: the job row this workflow runs, its plan, and what earlier runs left behind. */
export function admissionActivities(deps: AdmissionDeps) {
  const { pool, providers, logger } = deps;
  const hedgingPaused = hedgeBudgetGuard(deps);

  const planned = (name: string, uncertified?: string): PlannedProvider => {
    const { config } = providers.get(name);
    const retry = retrySettings(config.retry);
    return {
      name,
      timeoutMs: config.timeoutMs,
      heartbeatTimeoutMs: Math.min(config.timeoutMs, 10_000),
      sideEffects: config.sideEffects,
      ...(retry ? { retry } : {}),
      ...(uncertified ? { uncertified } : {}),
    };
  };

  /** Why each provider may not be failed over to (absent: certified for the contract in force). */
  async function uncertifiedReasons(
    db: Queryable,
    names: string[],
    contract: AnyJobTypeContract,
  ): Promise<Map<string, string>> {
    const version = contractVersion(contract);
    const verdicts = await findCertificationsForContract(db, {
      jobType: contract.name,
      contractVersion: version,
    });
    const reasons = new Map<string, string>();
    for (const name of names) {
      const model = providerModel(providers.get(name).config);
      const verdict = verdicts.find((v) => v.provider === name && v.model === model);
      if (!verdict) reasons.set(name, `not certified for the ${contract.name} contract ${version}`);
      else if (!verdict.passed)
        reasons.set(name, `failed certification for the ${contract.name} contract ${version}`);
    }
    return reasons;
  }

  /**
   * The Temporal-native path: the workflow writes the job row itself, with the same checks and
   * the same INSERT … ON CONFLICT as the API, so both paths meet on one row per (owner, key).
   */
  async function writeJobRow(input: JobWorkflowInput & { workflowId: string }) {
    const intent = input.intent;
    if (!intent) return undefined;
    // First, since validation walks the intent recursively (other clients than startJob may
    // start this workflow, so the client's check is not enough).
    const shapeRefusal = intentShapeRefusal(intent);
    if (shapeRefusal) throw typedFailure(FAILURES.invalidJob, shapeRefusal);
    const identityProblem = jobIdentityProblem(input.ownerId, input.idempotencyKey);
    if (identityProblem) throw typedFailure(FAILURES.invalidJob, identityProblem);
    // A run started under another id than its (owner, key)'s would squat that id: another key's
    // job could then never start its own workflow. The id names the key's generation too: the
    // first, or a later one after an operator released the key (startJob derives it).
    const generation = generationOfWorkflowId(input.workflowId);
    const derived = jobWorkflowId(input.ownerId, input.idempotencyKey, generation ?? 1);
    if (generation === undefined || input.workflowId !== derived)
      throw typedFailure(
        FAILURES.invalidJob,
        `workflow id ${input.workflowId} is not the one derived from this owner and key (${derived}); start jobs with startJob or jobWorkflowStartOptions`,
      );
    let resolved: ReturnType<typeof validateIntent>;
    try {
      resolved = validateIntent(
        { providers },
        { ...intent, providers: intent.providers ?? undefined },
      );
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      throw typedFailure(
        FAILURES.invalidJob,
        `${error.problemType}: ${error.message}`,
        error.details,
      );
    }
    if (input.requestFingerprint !== undefined && resolved.fingerprint !== input.requestFingerprint)
      throw typedFailure(
        FAILURES.jobIdentityMismatch,
        'the intent does not match the request fingerprint',
      );
    let job: JobRecord;
    try {
      ({ job } = await insertJobOrFindExisting(pool, {
        ownerId: input.ownerId,
        idempotencyKey: input.idempotencyKey,
        requestFingerprint: resolved.fingerprint,
        intent: {
          type: intent.type,
          input: resolved.input,
          providers: resolved.plan,
          mode: resolved.mode,
        },
        workflowId: input.workflowId,
        generation,
        // Only the generation this workflow's id names: another one is another workflow's job.
        workflowIdOfGeneration: (next) => (next === generation ? input.workflowId : undefined),
      }));
    } catch (error) {
      if (!(error instanceof KeyReleasedError)) throw error;
      if (!error.previous) throw typedFailure(FAILURES.invalidJob, error.message);
      // The key's next job runs under that generation's id (startJob derives it, as HTTP does).
      const next = jobWorkflowId(input.ownerId, input.idempotencyKey, error.nextGeneration);
      throw typedFailure(FAILURES.keyReleased, `${error.message}, workflow id ${next}`, {
        releasedJobId: error.previous.id,
        nextGeneration: error.nextGeneration,
        workflowId: next,
      });
    }
    // The row was won by another entry point with another intent: that job is not ours to run.
    if (job.requestFingerprint !== resolved.fingerprint)
      throw typedFailure(FAILURES.idempotencyKeyReuse, KEY_REUSE_MESSAGE, { jobId: job.id });
    return job;
  }

  /**
   * Attempts an earlier admission or run of this job's workflow left in flight. Attempt 1 still
   * `starting`, alone, on the plan's primary and in this mode, is the one an admission wrote
   * and nothing sent yet (admission ran again: a lost workflow task, a worker that died after
   * the write): it is reused as this admission's first attempt, since beginProviderCall lets
   * only one call ever send it (never on a job that has ended: `first` is then undefined). Any
   * other `starting` one never sent anything and is `failed` (`cancelled` on an ended job); a
   * `running` one may have, so it is `unknown` and will be reconciled.
   */
  async function adoptAttempts(
    db: Queryable,
    found: readonly AttemptRecord[],
    first: { provider: string; exclusive: boolean } | undefined,
  ): Promise<{
    attempts: AttemptSummary[];
    reusable?: AttemptSummary;
    /** The attempts' rows as adoption left them. */
    adopted: AttemptRecord[];
  }> {
    const [only] = found;
    if (
      found.length === 1 &&
      only &&
      only.seq === 1 &&
      only.state === 'starting' &&
      first &&
      only.provider === first.provider &&
      only.exclusive === first.exclusive
    )
      return { attempts: [], reusable: attemptSummary(only), adopted: [] };
    const adopted: AttemptRecord[] = [];
    for (const attempt of found) {
      adopted.push(
        attempt.state === 'starting' || attempt.state === 'running'
          ? await settleAbandonedAttempt(db, attempt.id, {
              code: 'orphaned',
              message: 'an earlier run of the job workflow ended while this attempt was in flight',
            })
          : attempt,
      );
    }
    return { attempts: adopted.map(attemptSummary), adopted };
  }

  /**
   * Attempt 1's row, written at admission so that the workflow's first provider call needs no
   * activity task before it. Anything unusual (the job was settled meanwhile, an attempt
   * appeared) leaves it to the workflow's own `startAttempt`, which reports it as it always has.
   */
  async function startFirstAttempt(
    tx: Queryable,
    jobId: string,
    provider: string,
    mode: JobPlan['mode'],
  ): Promise<AttemptSummary | undefined> {
    // Its own savepoint: a refusal must not undo the rest of admission's transaction.
    await tx.query('SAVEPOINT first_attempt');
    try {
      const attempt = await createAttempt(tx, {
        jobId,
        seq: 1,
        provider,
        exclusive: mode === 'exclusive',
        coolOffMs: breakerCoolOffMs(providers.get(provider).config),
      });
      await tx.query('RELEASE SAVEPOINT first_attempt');
      return attemptSummary(attempt);
    } catch (error) {
      await tx.query('ROLLBACK TO SAVEPOINT first_attempt');
      if (
        error instanceof JobNotOpenError ||
        error instanceof AttemptInFlightError ||
        error instanceof ProviderUnavailableError
      )
        return undefined;
      throw error;
    }
  }

  /**
   * How the job runs: a hedged job runs exclusive when hedging's budget is spent. Decided once,
   * before its first attempt, and kept as a note on the job, so that a later admission (a new
   * run of its workflow) holds to it; a job that already has attempts keeps its mode.
   */
  async function modeToRun(
    db: Queryable,
    job: JobRecord,
    plan: PlannedProvider[],
    attemptCount: number,
  ): Promise<JobMode> {
    if (job.mode !== 'hedged') return job.mode;
    if (job.notes.some((note) => (note as { event?: unknown }).event === 'hedging_paused'))
      return 'exclusive';
    const [primary, hedge] = plan;
    if (job.terminalStatus || attemptCount > 0 || !primary) return job.mode;
    const paused = await hedgingPaused(job.ownerId, primary.name, hedge?.name);
    if (!paused) return job.mode;
    await addJobNote(db, job.id, paused);
    logger.info({ jobId: job.id, ...paused }, 'hedging paused: its budget is spent');
    deps.metrics?.hedgingPaused.inc({ primary: primary.name });
    return 'exclusive';
  }

  /** Admission inside its transaction (see admitJob). */
  async function admitIn(
    tx: Queryable,
    input: AdmissionInput,
    written: JobRecord | undefined,
  ): Promise<{ jobId: string; outcome: AdmittedJob | { refused: Error } }> {
    const job = written ?? (input.jobId ? await findJob(tx, input.jobId) : undefined);
    if (!job) throw typedFailure(FAILURES.jobMissing, `job ${input.jobId} does not exist`);
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
      throw typedFailure(
        FAILURES.jobIdentityMismatch,
        `job ${job.id} does not match this workflow (${mismatched.join(', ')})`,
      );
    }
    const answer = (outcome: AdmittedJob | { refused: Error }) => ({ jobId: job.id, outcome });
    const contract = findJobType(job.type);
    if (!contract)
      return answer({
        refused: typedFailure(FAILURES.invalidJob, `unknown job type ${job.type}`),
      });
    // A plan this worker cannot run (a provider removed from its configuration, or workers
    // configured unlike the API) is refused for good, and said on the job, instead of being
    // retried for ever in silence. The row stays open: the sweeper tries a new run later, and
    // notes that it needs an operator after a few.
    const missing = job.providers.filter((name) => !providers.has(name));
    if (missing.length > 0) {
      const reason = `this worker has no provider ${missing.join(', ')} of the job's plan: the provider was removed from its configuration, or workers and API are configured differently`;
      await addJobNote(tx, job.id, { event: 'admission_refused', providers: missing, reason });
      logger.error({ jobId: job.id, providers: missing }, 'admission refused: provider missing');
      return answer({
        refused: typedFailure(FAILURES.providerMissing, reason, { providers: missing }),
      });
    }
    const compatibleNames = providers.compatible(contract.providerKinds);
    const reasons = await uncertifiedReasons(tx, compatibleNames, contract);
    // Only the primary may run uncertified (unless configured otherwise): failover, and a
    // user's explicit choice of another provider, need a verdict for the contract in force.
    const mayRunUncertified = (name: string): boolean =>
      name === job.providers[0] && deps.requireCertifiedPrimary !== true;
    const reasonFor = (name: string): string | undefined =>
      mayRunUncertified(name) ? undefined : reasons.get(name);

    const plan: PlannedProvider[] = [];
    const skipped: JobPlan['skipped'] = [];
    for (const name of job.providers) {
      const reason = reasonFor(name);
      if (!reason) {
        plan.push(planned(name));
        continue;
      }
      skipped.push({ provider: name, reason });
      logger.warn({ jobId: job.id, provider: name, reason }, 'provider skipped: not certified');
    }
    await addJobNotes(
      tx,
      job.id,
      skipped.map(({ provider, reason }) => ({ event: 'provider_skipped', provider, reason })),
    );
    const primary = job.providers[0];
    // Only a hedge waits for the primary's p95; an exclusive job has no use for it.
    const p95 = primary && job.mode === 'hedged' ? await observedP95Ms(tx, primary) : undefined;
    // A job that ended is run no further, but what an earlier admission left in flight is
    // settled all the same: a `starting` attempt of an ended job can never be sent (a call
    // begins only on an open job), and left so it would keep the key from ever being released.
    const existing = await listAttempts(tx, job.id);
    const mode = await modeToRun(tx, job, plan, existing.length);
    const { attempts, reusable, adopted } = await adoptAttempts(
      tx,
      existing,
      job.terminalStatus
        ? undefined
        : plan[0] && { provider: plan[0].name, exclusive: mode === 'exclusive' },
    );
    const lastFailure = lastFailureOf(job, adopted);
    const admitted: JobPlan = {
      ...(lastFailure ? { lastFailure } : {}),
      jobId: job.id,
      requestFingerprint: job.requestFingerprint,
      type: job.type,
      mode,
      providers: plan,
      skipped,
      compatible: compatibleNames.map((name) => planned(name, reasonFor(name))),
      hedgeDelayMs: p95 ?? deps.defaultHedgeDelayMs,
      terminalStatus: job.terminalStatus,
      completedBy: job.completedBy,
      attempts,
      maxAttempts: deps.maxAttemptsPerJob,
      historyEventLimit: deps.historyEventLimit,
      reconcileMaxDelayMs: deps.reconcileMaxDelayMs,
      reconcileFirstDelayMs: deps.reconcileFirstDelayMs,
      blockedSelfLookMs: deps.blockedSelfLookMs,
      needsOperatorAfterMs: deps.needsOperatorAfterMs,
    };
    const first = plan[0];
    if (reusable && input.startFirstAttempt) return answer({ ...admitted, firstAttempt: reusable });
    if (
      !input.startFirstAttempt ||
      !first ||
      admitted.terminalStatus ||
      admitted.attempts.length > 0 ||
      admitted.maxAttempts < 1
    )
      return answer(admitted);
    const firstAttempt = await startFirstAttempt(tx, job.id, first.name, mode);
    return answer(firstAttempt ? { ...admitted, firstAttempt } : admitted);
  }

  return {
    /** Which job a key names now: its unreleased job, and its highest generation. */
    async findKeyJobs(input: KeyJobsInput): Promise<KeyJobs> {
      const [live, latest] = await Promise.all([
        findJobByKey(pool, input.ownerId, input.idempotencyKey),
        latestJobOfKey(pool, input.ownerId, input.idempotencyKey),
      ]);
      return {
        live: live
          ? {
              jobId: live.id,
              generation: live.keyGeneration,
              workflowId: live.workflowId,
              requestFingerprint: live.requestFingerprint,
            }
          : null,
        latestGeneration: latest?.keyGeneration ?? 0,
      };
    },

    /**
     * Refuses to run a job whose row is missing or belongs to a different (owner, key, intent);
     * otherwise reads its plan, leaving out fallbacks not certified for the contract in force.
     * One transaction: the job, its certifications and attempts read, its admission and first
     * attempt written. A refusal that leaves a note on the job is thrown once that has committed.
     */
    async admitJob(input: AdmissionInput): Promise<AdmittedJob> {
      const written = input.jobId ? undefined : await writeJobRow(input);
      const admission = await inTransaction(pool, async (tx) => {
        const { jobId, outcome } = await admitIn(tx, input, written);
        // Last: the UPDATE locks the job row until COMMIT, and an operator's cancel must not
        // wait behind the rest of admission for it.
        await markJobAdmitted(tx, jobId);
        return outcome;
      });
      if ('refused' in admission) throw admission.refused;
      return admission;
    },
  };
}
