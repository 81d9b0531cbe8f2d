import { reportAttemptFailure } from '../db/attemptFailureReports';
import { findAttempt, type AttemptRecord } from '../db/attempts';
import { failOnEvidence, settleAttemptWithoutResult } from '../db/attemptSettlement';
import {
  callTiming,
  forgetNoRecord,
  noteNoRecord,
  providerRecordsUntrusted,
} from '../db/callClock';
import { findJob, type JobRecord } from '../db/jobs';
import { failureVerdict, type AttemptEvidence, type FailureEvidence } from '../domain/certainty';
import { checkOutput, findJobType, type AnyJobTypeContract } from '../jobTypes';
import type { Logger } from '../logger';
import { lateResultTimeoutMs, notFoundGraceMs, type Provider } from '../providers/provider';
import { attemptOutcome, recordResult } from '../service/results';
import { inSpan } from '../telemetry/spans';
import type { AttemptOutcome, ReconcileOutcome } from '../workflows/definitions';
import { replayLook, type ReplayFinding } from './replayLook';
import type { ActivityDeps } from './types';

/** A call without side effects that can no longer be running and never answered. */
const CALL_GONE = {
  code: 'call_gone',
  message:
    'the call can no longer answer (its worker stopped, or its late-result window is over), and the provider has no side effects',
};

type LookDeps = Pick<ActivityDeps, 'pool' | 'providers' | 'logger'>;

/** What a look's write says when the attempt changed under it: decide again on the new row. */
const LOOK_AGAIN = Symbol('look again');
/** Looks in a row on one turn before the turn gives up (the next turn comes in 100 ms). */
const LOOKS_PER_TURN = 3;
/** PostgreSQL's check_violation: a CHECK or a guard trigger refused the write. */
const CHECK_VIOLATION = '23514';

type Looked = ReconcileOutcome | typeof LOOK_AGAIN;

/**
 * One look at an attempt. A settled one reports how it settled. An unknown one may have been
 * settled by its late answer; otherwise the provider's status lookup is asked. Its "never
 * processed" counts only once the original call can no longer land (it ended, or its
 * late-result window is over), plus the provider's grace. An attempt on a provider and job type
 * without side effects fails once its call can no longer be running: there is nothing to wait for.
 */
export function lookAtAttempt(deps: LookDeps) {
  /** Looks at the attempt; a verdict whose grounds changed meanwhile sends it back to look again. */
  const look = async (attemptId: string, looksLeft = LOOKS_PER_TURN): Promise<ReconcileOutcome> => {
    const outcome = await lookOnce(deps, attemptId);
    if (outcome !== LOOK_AGAIN) return outcome;
    const attempt = await findAttempt(deps.pool, attemptId);
    if (!attempt) throw new Error(`attempt ${attemptId} does not exist`);
    if (looksLeft > 1) return look(attemptId, looksLeft - 1);
    return stillUnknown(deps, attempt, 'the attempt kept changing while it was looked at', {
      recheckInMs: 100,
    });
  };
  return look;
}

async function stillUnknown(
  deps: Pick<LookDeps, 'pool'>,
  attempt: AttemptRecord,
  detail: string,
  extra: Pick<ReconcileOutcome, 'needsOperator' | 'recheckInMs'> = {},
): Promise<ReconcileOutcome> {
  return { ...(await attemptOutcome(deps.pool, attempt)), detail, ...extra };
}

/**
 * The verdict "failed", written only if its grounds still hold (failOnEvidence): otherwise
 * look again. A refusal by the database's guards all the same (evidence the look did not weigh,
 * a configuration changed under an old attempt) is no news that a new look would change: the
 * attempt waits for an operator, and the look never fails its workflow.
 */
async function failed(
  deps: LookDeps,
  attempt: AttemptRecord,
  error: { code: string; message: string },
  evidence: Pick<AttemptEvidence, 'successAnswered' | 'recordsUntrusted'> = {
    successAnswered: attempt.successAnsweredAt !== null,
  },
): Promise<AttemptOutcome | typeof LOOK_AGAIN> {
  const { pool, logger } = deps;
  try {
    const settled = await failOnEvidence(pool, attempt.id, error, evidence);
    return settled ? attemptOutcome(pool, settled) : LOOK_AGAIN;
  } catch (refusal) {
    if ((refusal as { code?: string }).code !== CHECK_VIOLATION) throw refusal;
    logger.error(
      { err: refusal, attemptId: attempt.id, verdict: error.code },
      'the database refuses to fail this attempt; it waits for an operator',
    );
    return stillUnknown(
      deps,
      attempt,
      `needs an operator: the database refuses to settle it failed (${error.code}): ${(refusal as Error).message}`,
      { needsOperator: true },
    );
  }
}

/** What one look at an unknown attempt whose call began knows. */
interface OneLook {
  deps: LookDeps;
  attempt: AttemptRecord;
  job: JobRecord;
  contract: AnyJobTypeContract;
  log: Logger;
  evidence: AttemptEvidence;
  /** The call's late-result window and the provider's grace for "no record". */
  window: { lateResultMs: number; graceMs: number };
  /** The call can no longer land: its "no record" may be believed, its silence is final. */
  believable: boolean;
}

async function lookOnce(deps: LookDeps, attemptId: string): Promise<Looked> {
  const { pool, providers, logger } = deps;
  const attempt = await findAttempt(pool, attemptId);
  if (!attempt) throw new Error(`attempt ${attemptId} does not exist`);
  if (attempt.state !== 'unknown') return attemptOutcome(pool, attempt);
  const job = await findJob(pool, attempt.jobId);
  const contract = job && findJobType(job.type);
  if (!job || !contract) throw new Error(`attempt ${attempt.id} has no job or job type`);
  const provider = providers.get(attempt.provider);
  const sideEffects = contract.sideEffects || provider.config.sideEffects;
  if (!attempt.startedAt) {
    // Unknown before its call ever began (abandoned while starting): nothing was sent.
    return failed(deps, attempt, {
      code: 'never_sent',
      message: 'the call never began, so nothing was sent',
    });
  }
  // Every comparison of times in this rule is PostgreSQL's, on its own clock: the call's
  // start and end are its timestamps, and a worker's clock may be minutes off.
  const window = {
    lateResultMs: lateResultTimeoutMs(provider.config),
    graceMs: notFoundGraceMs(provider.config),
  };
  const timing = await callTiming(pool, attempt.id, window);
  if (!timing) throw new Error(`attempt ${attempt.id} has a started call but no timing`);
  const callOver = timing.msUntilCallOver === 0;
  const one: OneLook = {
    deps,
    attempt,
    job,
    contract,
    log: logger.child({ jobId: job.id, attemptId: attempt.id, workflowId: job.workflowId }),
    evidence: { sideEffects, successAnswered: attempt.successAnsweredAt !== null },
    window,
    believable: timing.msUntilBelievable === 0,
  };

  if (attempt.reportedFailure) {
    // A held "failed" (a signed callback, an operator's) waits for the call to be over; it
    // may be now. A success answer since outranks it.
    if (!one.evidence.successAnswered) {
      const settled = await reportAttemptFailure(pool, attempt.id, null);
      if (settled.state !== 'unknown') return attemptOutcome(pool, settled);
    } else {
      const byOperator = typeof attempt.reportedFailure.operator === 'string';
      return onFailureEvidence(one, byOperator ? 'held-operator-failure' : 'failed-callback', {
        code: byOperator ? 'operator' : 'provider_callback',
        message: String(attempt.reportedFailure.message ?? 'the provider reported a failure'),
      });
    }
  }

  // Inside the provider's key window, the request itself, sent again, is the lookup.
  let closed: string | undefined;
  if (provider.replay && sideEffects) {
    const found = await replayLook(deps, attempt.id, provider.replay);
    if (found.kind !== 'closed') return byReplay(one, found);
    closed = found.detail;
  }
  if (provider.lookupStatus) return byStatusLookup(one, provider.lookupStatus);
  if (closed) return forAnOperator(one, 'replay-window-over', `needs an operator: ${closed}`);
  if (!sideEffects) {
    if (one.believable) return failed(deps, attempt, CALL_GONE);
    return stillUnknown(
      deps,
      attempt,
      'waiting for the call to end: its late answer wins the compare-and-swap, its error fails the attempt',
      { recheckInMs: Math.max(timing.msUntilBelievable, 100) },
    );
  }
  return stillUnknown(
    deps,
    attempt,
    'the provider has no status lookup: its late answer, a signed callback or an operator settles it',
    { needsOperator: callOver },
  );
}

/** Settles by the certainty table, or says why an operator must. */
async function onFailureEvidence(
  one: OneLook,
  kind: FailureEvidence,
  error: { code: string; message: string },
): Promise<Looked> {
  const verdict = failureVerdict(kind, one.evidence);
  if (verdict.settle === 'failed') return failed(one.deps, one.attempt, error, one.evidence);
  return forAnOperator(one, kind, verdict.detail);
}

/**
 * Only a person can settle it: said once on the row (so GET and the CLI show it too, not only
 * the workflow), with what the provider answered when there is more to keep than the detail.
 */
async function forAnOperator(
  one: OneLook,
  evidence: string,
  detail: string,
  answered?: object,
): Promise<Looked> {
  const { deps, attempt, log } = one;
  const noted = (attempt.error as { code?: string } | null)?.code === 'needs_operator';
  if (!noted) {
    log.warn({ evidence }, detail);
    await settleAttemptWithoutResult(deps.pool, attempt.id, 'unknown', {
      code: 'needs_operator',
      evidence,
      message: detail,
      ...(answered ? { answered } : {}),
    });
  }
  return stillUnknown(deps, attempt, detail, { needsOperator: true });
}

/** The verdict a replay's finding leads to. */
async function byReplay(
  one: OneLook,
  found: Exclude<ReplayFinding, { kind: 'closed' }>,
): Promise<Looked> {
  const { deps, attempt } = one;
  if (found.kind === 'answered') return settledByAnswer(one, found.output, 'replay');
  if (found.kind === 'refused') return onFailureEvidence(one, 'replay-refused', found.error);
  if (found.kind === 'key_reused')
    return forAnOperator(one, 'replay-key-reused', found.detail, found.answered);
  return stillUnknown(
    deps,
    attempt,
    found.detail,
    found.recheckInMs === undefined ? {} : { recheckInMs: found.recheckInMs },
  );
}

/** A lookup's answer of the work: recorded through the compare-and-swap when the contract takes it. */
async function settledByAnswer(one: OneLook, output: unknown, source: string): Promise<Looked> {
  const { deps, attempt, job, contract, log } = one;
  const checked = checkOutput(contract, job.input, output, { attemptId: attempt.id });
  if (checked.ok)
    return recordResult(deps, { attemptId: attempt.id, result: checked.output, source });
  log.warn({ reason: checked.reason, source }, `the ${source}'s answer breaks the contract`);
  return stillUnknown(
    deps,
    attempt,
    `the ${source === 'replay' ? 'replay' : 'status lookup'} answered, but ${checked.reason}; an operator must settle it`,
    { needsOperator: true },
  );
}

/** What the provider's status lookup says of the attempt, and the verdict it leads to. */
async function byStatusLookup(
  one: OneLook,
  lookupStatus: NonNullable<Provider['lookupStatus']>,
): Promise<Looked> {
  const { deps, attempt, job, log, evidence, window } = one;
  const { pool } = deps;
  // Its own span in the job's trace: what the provider said, beside the swap that may follow.
  const status = await inSpan(
    'status lookup',
    {
      'onejob.provider': attempt.provider,
      'onejob.attempt_id': attempt.id,
      'onejob.job_id': job.id,
    },
    async (span) => {
      const answer = await lookupStatus(attempt.id);
      span.setAttribute('onejob.lookup', answer.state);
      return answer;
    },
  );
  if (status.state === 'succeeded') return settledByAnswer(one, status.output, 'status-lookup');
  if (status.state === 'not_found') {
    // A 2xx was answered: "no record under our key" says nothing about whether it worked.
    if (evidence.successAnswered)
      return onFailureEvidence(one, 'not-found-twice', {
        code: 'never_processed',
        message: 'the provider status lookup has no record of this idempotency key',
      });
    // Believed only when said twice, the grace apart, after the call can no longer land:
    // a provider that registers the key late (when first asked, say) has a record by the
    // second look.
    const noRecord = await noteNoRecord(pool, attempt.id, window);
    if (!noRecord) {
      // Settled meanwhile (a late answer, a callback): report that.
      const current = await findAttempt(pool, attempt.id);
      if (!current) throw new Error(`attempt ${attempt.id} does not exist`);
      return attemptOutcome(pool, current);
    }
    if (noRecord.verdict === 'confirmed') {
      evidence.recordsUntrusted = await providerRecordsUntrusted(pool, attempt.provider);
      log.info('provider says twice that the attempt was never processed');
      return onFailureEvidence(one, 'not-found-twice', {
        code: 'never_processed',
        message:
          'the provider status lookup has no record of this idempotency key, twice, and the original call can no longer land',
      });
    }
    if (noRecord.verdict === 'noted')
      return stillUnknown(
        deps,
        attempt,
        'the status lookup has no record; it is asked once more before that is believed',
        { recheckInMs: noRecord.recheckInMs },
      );
    return stillUnknown(
      deps,
      attempt,
      `the status lookup has no record yet, but the original call could still land: believable in ${Math.ceil(noRecord.recheckInMs / 1000)} s (the call's end or late-result window, then the provider's grace)`,
      { recheckInMs: Math.max(noRecord.recheckInMs, 100) },
    );
  }
  // The provider knows of it after all (still processing): an earlier "no record" is void.
  if (attempt.firstNotFoundAt) await forgetNoRecord(pool, attempt.id);
  if (!evidence.sideEffects && one.believable) return failed(deps, attempt, CALL_GONE);
  return stillUnknown(deps, attempt, status.detail);
}
