import {
  callTiming,
  failOnEvidence,
  forgetNoRecord,
  noteNoRecord,
  reportAttemptFailure,
  settleAbandonedAttempt,
  providerRecordsUntrusted,
  settleAttemptWithoutResult,
} from '../db/attemptCalls';
import { scheduleNextCheck } from '../db/attemptChecks';
import {
  AttemptInFlightError,
  createAttempt,
  findAttempt,
  JobNotOpenError,
  ProviderUnavailableError,
  type AttemptRecord,
} from '../db/attempts';
import { addCountedJobNote, addJobNote, findJob } from '../db/jobs';
import { failureVerdict, type AttemptEvidence, type FailureEvidence } from '../domain/certainty';
import { FAILURES, typedFailure } from '../domain/failures';
import { checkOutput, findJobType } from '../jobTypes';
import { breakerCoolOffMs, lateResultTimeoutMs, notFoundGraceMs } from '../providers/provider';
import { attemptOutcome, recordResult } from '../service/results';
import { inSpan } from '../telemetry/spans';
import type { AttemptLook, AttemptOutcome, ReconcileOutcome } from '../workflows/definitions';
import type { ActivityDeps } from './types';

/** A call without side effects that can no longer be running and never answered. */
const CALL_GONE = {
  code: 'call_gone',
  message:
    'the call can no longer answer (its worker stopped, or its late-result window is over), and the provider has no side effects',
};

type LookDeps = Pick<
  ActivityDeps,
  'pool' | 'providers' | 'logger' | 'reconcileFirstDelayMs' | 'reconcileMaxDelayMs'
>;

/**
 * Looks again at an attempt (lookAtAttempt) and, when it is still unknown, writes when the
 * next look is due: the workflow's own looks and the reconciler's share one schedule.
 */
export function attemptLooks(deps: LookDeps): {
  lookAgain(input: { attemptId: string }): Promise<AttemptLook>;
} {
  const look = lookAtAttempt(deps);
  const pauses = {
    firstMs: deps.reconcileFirstDelayMs,
    maxMs: deps.reconcileMaxDelayMs,
  };
  return {
    async lookAgain(input) {
      const outcome = await look(input.attemptId);
      if (outcome.state !== 'unknown') return { outcome, operatorNewlyNeeded: false };
      const scheduled = await scheduleNextCheck(deps.pool, input.attemptId, pauses, {
        ...(outcome.recheckInMs === undefined ? {} : { inMs: outcome.recheckInMs }),
        needsOperator: outcome.needsOperator === true,
      });
      return { outcome, ...scheduled };
    },
  };
}

/** Creating attempts, abandoning them, and looking again at unknown ones. */
export function attemptActivities(deps: LookDeps) {
  const { pool, providers } = deps;
  const { lookAgain } = attemptLooks(deps);

  return {
    /**
     * Notes on the job what its workflow is about to do (a retry's wait): once, however often
     * run; a retry is also counted for onejob_provider_retries_total{provider, cause}.
     */
    async noteOnJob(input: { jobId: string; note: Record<string, unknown> }): Promise<void> {
      const { note } = input;
      if (note.event === 'retry_scheduled')
        await addCountedJobNote(
          pool,
          input.jobId,
          note,
          'provider_retries',
          `${String(note.provider)}|${String(note.cause)}`,
        );
      else await addJobNote(pool, input.jobId, note);
    },

    /** Creates attempt `seq` in state `starting`; refuses with a typed failure when it may not. */
    async startAttempt(input: {
      jobId: string;
      seq: number;
      provider: string;
      exclusive: boolean;
    }): Promise<{ id: string; state: AttemptRecord['state'] }> {
      try {
        const attempt = await createAttempt(pool, {
          ...input,
          ...(providers.has(input.provider)
            ? { coolOffMs: breakerCoolOffMs(providers.get(input.provider).config) }
            : {}),
        });
        return { id: attempt.id, state: attempt.state };
      } catch (error) {
        if (error instanceof ProviderUnavailableError) {
          const { provider, until, reason } = error.unavailability;
          // The job says why its plan passed the provider by (once per reason and time).
          await addCountedJobNote(
            pool,
            input.jobId,
            { event: 'provider_skipped', provider, reason, until: until.toISOString() },
            'provider_skips',
            `${provider}|${error.unavailability.cause}`,
          );
          throw typedFailure(FAILURES.providerUnavailable, error.message, {
            provider,
            reason,
            until: until.toISOString(),
            retryAfterSeconds: Math.max(1, Math.ceil((until.getTime() - Date.now()) / 1000)),
          });
        }
        if (error instanceof JobNotOpenError)
          throw typedFailure(FAILURES.jobNotOpen, error.message, {
            terminalStatus: error.terminalStatus,
            completedBy: error.completedBy,
          });
        if (error instanceof AttemptInFlightError)
          throw typedFailure(FAILURES.attemptInFlight, error.message, {
            attemptId: error.blocking?.id,
            seq: error.blocking?.seq,
            provider: error.blocking?.provider,
            state: error.blocking?.state,
          });
        throw error;
      }
    },

    /**
     * The workflow stopped waiting for a call (timeout, cancel, a crashed worker): `unknown` if
     * the request may have left, `failed` if it certainly never did.
     */
    async abandonAttempt(input: {
      attemptId: string;
      error: Record<string, unknown>;
    }): Promise<AttemptOutcome> {
      return attemptOutcome(pool, await settleAbandonedAttempt(pool, input.attemptId, input.error));
    },

    /** Looks again at an attempt; the workflow's look, between the reconciler's. */
    async reconcileAttempt(input: { attemptId: string }): Promise<ReconcileOutcome> {
      return (await lookAgain(input)).outcome;
    },
  };
}

/**
 * One look at an attempt. A settled one reports how it settled. An unknown one may have been
 * settled by its late answer; otherwise the provider's status lookup is asked. Its "never
 * processed" counts only once the original call can no longer land (it ended, or its
 * late-result window is over), plus the provider's grace. An attempt on a provider and job type
 * without side effects fails once its call can no longer be running: there is nothing to wait for.
 */
function lookAtAttempt(deps: Pick<ActivityDeps, 'pool' | 'providers' | 'logger'>) {
  const { pool, providers, logger } = deps;

  const stillUnknown = async (
    attempt: AttemptRecord,
    detail: string,
    extra: Pick<ReconcileOutcome, 'needsOperator' | 'recheckInMs'> = {},
  ): Promise<ReconcileOutcome> => ({ ...(await attemptOutcome(pool, attempt)), detail, ...extra });

  /** Looks at the attempt; a verdict whose grounds changed meanwhile sends it back to look again. */
  const look = async (attemptId: string, looksLeft = LOOKS_PER_TURN): Promise<ReconcileOutcome> => {
    const outcome = await lookOnce(attemptId);
    if (outcome !== LOOK_AGAIN) return outcome;
    const attempt = await findAttempt(pool, attemptId);
    if (!attempt) throw new Error(`attempt ${attemptId} does not exist`);
    if (looksLeft > 1) return look(attemptId, looksLeft - 1);
    return stillUnknown(attempt, 'the attempt kept changing while it was looked at', {
      recheckInMs: 100,
    });
  };

  /**
   * The verdict "failed", written only if its grounds still hold (failOnEvidence): otherwise
   * look again. A refusal by the database's guards all the same (evidence the look did not weigh,
   * a configuration changed under an old attempt) is no news that a new look would change: the
   * attempt waits for an operator, and the look never fails its workflow.
   */
  const failed = async (
    attempt: AttemptRecord,
    error: { code: string; message: string },
    evidence: Pick<AttemptEvidence, 'successAnswered' | 'recordsUntrusted'> = {
      successAnswered: attempt.successAnsweredAt !== null,
    },
  ): Promise<AttemptOutcome | typeof LOOK_AGAIN> => {
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
        attempt,
        `needs an operator: the database refuses to settle it failed (${error.code}): ${(refusal as Error).message}`,
        { needsOperator: true },
      );
    }
  };

  const lookOnce = async (attemptId: string): Promise<ReconcileOutcome | typeof LOOK_AGAIN> => {
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
      return failed(attempt, {
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
    const believable = timing.msUntilBelievable === 0;
    const log = logger.child({
      jobId: job.id,
      attemptId: attempt.id,
      workflowId: job.workflowId,
    });
    const evidence: AttemptEvidence = {
      sideEffects,
      successAnswered: attempt.successAnsweredAt !== null,
    };
    /** Settles by the certainty table, or says why an operator must. */
    const onFailureEvidence = async (
      kind: FailureEvidence,
      error: { code: string; message: string },
    ): Promise<ReconcileOutcome | typeof LOOK_AGAIN> => {
      const verdict = failureVerdict(kind, evidence);
      if (verdict.settle === 'failed') return failed(attempt, error, evidence);
      // Said once on the row, so GET and the CLI show it too, not only the workflow.
      const noted = (attempt.error as { code?: string } | null)?.code === 'needs_operator';
      if (!noted) {
        log.warn({ evidence: kind }, verdict.detail);
        await settleAttemptWithoutResult(pool, attempt.id, 'unknown', {
          code: 'needs_operator',
          evidence: kind,
          message: verdict.detail,
        });
      }
      return stillUnknown(attempt, verdict.detail, { needsOperator: true });
    };

    if (attempt.reportedFailure) {
      // A held "failed" (a signed callback, an operator's) waits for the call to be over; it
      // may be now. A success answer since outranks it.
      if (!evidence.successAnswered) {
        const settled = await reportAttemptFailure(pool, attempt.id, null);
        if (settled.state !== 'unknown') return attemptOutcome(pool, settled);
      } else {
        const byOperator = typeof attempt.reportedFailure.operator === 'string';
        return onFailureEvidence(byOperator ? 'held-operator-failure' : 'failed-callback', {
          code: byOperator ? 'operator' : 'provider_callback',
          message: String(attempt.reportedFailure.message ?? 'the provider reported a failure'),
        });
      }
    }

    const { lookupStatus } = provider;
    if (lookupStatus) {
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
      if (status.state === 'succeeded') {
        const checked = checkOutput(contract, job.input, status.output, {
          attemptId: attempt.id,
        });
        if (checked.ok)
          return recordResult(deps, {
            attemptId: attempt.id,
            result: checked.output,
            source: 'status-lookup',
          });
        log.warn({ reason: checked.reason }, 'status lookup answer breaks the contract');
        return stillUnknown(
          attempt,
          `the status lookup answered, but ${checked.reason}; an operator must settle it`,
          { needsOperator: true },
        );
      }
      if (status.state === 'not_found') {
        // A 2xx was answered: "no record under our key" says nothing about whether it worked.
        if (evidence.successAnswered)
          return onFailureEvidence('not-found-twice', {
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
          return onFailureEvidence('not-found-twice', {
            code: 'never_processed',
            message:
              'the provider status lookup has no record of this idempotency key, twice, and the original call can no longer land',
          });
        }
        if (noRecord.verdict === 'noted')
          return stillUnknown(
            attempt,
            'the status lookup has no record; it is asked once more before that is believed',
            { recheckInMs: noRecord.recheckInMs },
          );
        return stillUnknown(
          attempt,
          `the status lookup has no record yet, but the original call could still land: believable in ${Math.ceil(noRecord.recheckInMs / 1000)} s (the call's end or late-result window, then the provider's grace)`,
          { recheckInMs: Math.max(noRecord.recheckInMs, 100) },
        );
      }
      // The provider knows of it after all (still processing): an earlier "no record" is void.
      if (attempt.firstNotFoundAt) await forgetNoRecord(pool, attempt.id);
      if (!sideEffects && believable) return failed(attempt, CALL_GONE);
      return stillUnknown(attempt, status.detail);
    }
    if (!sideEffects) {
      if (believable) return failed(attempt, CALL_GONE);
      return stillUnknown(
        attempt,
        'waiting for the call to end: its late answer wins the compare-and-swap, its error fails the attempt',
        { recheckInMs: Math.max(timing.msUntilBelievable, 100) },
      );
    }
    return stillUnknown(
      attempt,
      'the provider has no status lookup: its late answer, a signed callback or an operator settles it',
      { needsOperator: callOver },
    );
  };
  return look;
}

/** What a look's write says when the attempt changed under it: decide again on the new row. */
const LOOK_AGAIN = Symbol('look again');
/** Looks in a row on one turn before the turn gives up (the next turn comes in 100 ms). */
const LOOKS_PER_TURN = 3;
/** PostgreSQL's check_violation: a CHECK or a guard trigger refused the write. */
const CHECK_VIOLATION = '23514';
