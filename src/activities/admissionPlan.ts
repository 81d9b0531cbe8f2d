/** Admission's plan of a job: which providers run it, how, and the limits it runs within. */
import { listAttempts } from '../db/attempts';
import { findCertificationsForContract } from '../db/certifications';
import { addJobNote, addJobNotes, findJob, type JobRecord } from '../db/jobs';
import type { Queryable } from '../db/pool';
import { decertifiedForContract } from '../db/providerEligibility';
import { observedP95Ms } from '../db/providerStats';
import { FAILURES, typedFailure } from '../domain/failures';
import type { JobMode } from '../domain/job';
import { retrySettings } from '../domain/retries';
import { contractVersion, findJobType, type AnyJobTypeContract } from '../jobTypes';
import { providerModel } from '../providers/provider';
import type { AdmittedJob, JobWorkflowInput } from '../workflows/definitions';
import { adoptAttempts, lastFailureOf, startFirstAttempt } from './admissionAttempts';
import { lostEligibilityReason } from './fallbackEligibility';
import type { hedgeBudgetGuard } from './hedgeBudget';
import { pricedOut } from './priceCeilings';
import { type ActivityDeps, type JobPlan, type PlannedProvider } from './types';

export type AdmissionInput = JobWorkflowInput & { workflowId: string; startFirstAttempt?: boolean };

export type AdmissionDeps = Pick<
  ActivityDeps,
  | 'metrics'
  | 'pool'
  | 'admissionHoldRecheckMs'
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

/** What admission works with: its deps, and hedging's budget guard (made with the activities). */
export interface AdmissionContext {
  deps: AdmissionDeps;
  hedgingPaused: ReturnType<typeof hedgeBudgetGuard>;
}

/** A provider as the plan holds it: its limits, its retries, and why it may not run the job. */
function planned(
  providers: AdmissionDeps['providers'],
  name: string,
  uncertified?: string,
): PlannedProvider {
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
}

/** Why each provider may not be failed over to (absent: certified for the contract in force). */
async function uncertifiedReasons(
  providers: AdmissionDeps['providers'],
  db: Queryable,
  names: string[],
  contract: AnyJobTypeContract,
): Promise<Map<string, string>> {
  const version = contractVersion(contract);
  const verdicts = await findCertificationsForContract(db, {
    jobType: contract.name,
    contractVersion: version,
  });
  const losses = await decertifiedForContract(db, {
    jobType: contract.name,
    contractVersion: version,
  });
  const reasons = new Map<string, string>();
  for (const name of names) {
    const model = providerModel(providers.get(name).config);
    const verdict = verdicts.find((v) => v.provider === name && v.model === model);
    const lost = losses.find((l) => l.provider === name && l.model === model);
    if (!verdict) reasons.set(name, `not certified for the ${contract.name} contract ${version}`);
    else if (!verdict.passed)
      reasons.set(name, `failed certification for the ${contract.name} contract ${version}`);
    else if (lost) reasons.set(name, lostEligibilityReason(lost));
  }
  return reasons;
}

/**
 * How the job runs: a hedged job runs exclusive when hedging's budget is spent. Decided once,
 * before its first attempt, and kept as a note on the job, so that a later admission (a new
 * run of its workflow) holds to it; a job that already has attempts keeps its mode.
 */
async function modeToRun(
  { deps, hedgingPaused }: AdmissionContext,
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
  deps.logger.info({ jobId: job.id, ...paused }, 'hedging paused: its budget is spent');
  deps.metrics?.hedgingPaused.inc({ primary: primary.name });
  return 'exclusive';
}

/** The fields in which the job's row and this workflow's input disagree (none: they match). */
function mismatchedFields(job: JobRecord, input: AdmissionInput): string[] {
  return (
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
}

/** Admission inside its transaction (see admitJob in admission.ts). */
export async function admitIn(
  context: AdmissionContext,
  tx: Queryable,
  input: AdmissionInput,
  written: JobRecord | undefined,
): Promise<{ jobId: string; outcome: AdmittedJob | { refused: Error } }> {
  const { deps } = context;
  const { providers, logger } = deps;
  const job = written ?? (input.jobId ? await findJob(tx, input.jobId) : undefined);
  if (!job) throw typedFailure(FAILURES.jobMissing, `job ${input.jobId} does not exist`);
  const mismatched = mismatchedFields(job, input);
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
  const reasons = await uncertifiedReasons(providers, tx, compatibleNames, contract);
  // Only the primary may run uncertified (unless configured otherwise): failover, and a
  // user's explicit choice of another provider, need a verdict for the contract in force.
  const mayRunUncertified = (name: string): boolean =>
    name === job.providers[0] && deps.requireCertifiedPrimary !== true;
  const priced = await pricedOut(providers, tx, job, contract, compatibleNames);
  const reasonFor = (name: string): string | undefined =>
    (mayRunUncertified(name) ? undefined : reasons.get(name)) ?? priced.get(name)?.reason;

  const plan: PlannedProvider[] = [];
  const skipped: JobPlan['skipped'] = [];
  for (const name of job.providers) {
    const reason = reasonFor(name);
    if (!reason) {
      plan.push(planned(providers, name));
      continue;
    }
    skipped.push({ provider: name, reason });
    logger.warn({ jobId: job.id, provider: name, reason }, 'provider skipped');
  }
  await addJobNotes(
    tx,
    job.id,
    skipped.map(({ provider, reason }) => {
      const avoided = priced.get(provider)?.avoided;
      return { event: 'provider_skipped', provider, reason, ...(avoided ? { avoided } : {}) };
    }),
  );
  const primary = job.providers[0];
  // Only a hedge waits for the primary's p95; an exclusive job has no use for it.
  const p95 = primary && job.mode === 'hedged' ? await observedP95Ms(tx, primary) : undefined;
  // A job that ended is run no further, but what an earlier admission left in flight is
  // settled all the same: a `starting` attempt of an ended job can never be sent (a call
  // begins only on an open job), and left so it would keep the key from ever being released.
  const existing = await listAttempts(tx, job.id);
  const mode = await modeToRun(context, tx, job, plan, existing.length);
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
    compatible: compatibleNames.map((name) => planned(providers, name, reasonFor(name))),
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
  const firstAttempt = await startFirstAttempt(deps, tx, job.id, first.name, mode);
  return answer(firstAttempt ? { ...admitted, firstAttempt } : admitted);
}
