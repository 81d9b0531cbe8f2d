import { reportAttemptFailure } from '../db/attemptFailureReports';
import { findAttempt } from '../db/attempts';
import {
  callTiming,
  forgetNoRecord,
  noteNoRecord,
  providerRecordsUntrusted,
} from '../db/callClock';
import { findJob } from '../db/jobs';
import { findJobType } from '../jobTypes';
import { lateResultTimeoutMs, notFoundGraceMs, type Provider } from '../providers/provider';
import { attemptOutcome } from '../service/results';
import { inSpan } from '../telemetry/spans';
import type { ReconcileOutcome } from '../workflows/definitions';
import {
  failed,
  forAnOperator,
  LOOK_AGAIN,
  onFailureEvidence,
  settledByAnswer,
  stillUnknown,
  type LookDeps,
  type Looked,
  type OneLook,
} from './lookVerdicts';
import { byReplay, replayLook } from './replayLook';

/** A call without side effects that can no longer be running and never answered. */
const CALL_GONE = {
  code: 'call_gone',
  message:
    'the call can no longer answer (its worker stopped, or its late-result window is over), and the provider has no side effects',
};

/** Looks in a row on one turn before the turn gives up (the next turn comes in 100 ms). */
const LOOKS_PER_TURN = 3;
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
    const found = await replayLook(deps, attempt.id, provider.replay, window.lateResultMs);
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
