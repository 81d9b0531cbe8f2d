/**
 * What a look at an unknown attempt may conclude, and how each conclusion is written: still
 * unknown (with why), failed on evidence whose grounds still hold, for an operator (said once on
 * the row), by the certainty table, or a lookup's answer through the compare-and-swap.
 */
import type { AttemptRecord } from '../db/attempts';
import { failOnEvidence, settleAttemptWithoutResult } from '../db/attemptSettlement';
import type { JobRecord } from '../db/jobs';
import { failureVerdict, type AttemptEvidence, type FailureEvidence } from '../domain/certainty';
import { checkOutput, type AnyJobTypeContract } from '../jobTypes';
import type { Logger } from '../logger';
import { attemptOutcome, recordResult } from '../service/results';
import type { AttemptOutcome, ReconcileOutcome } from '../workflows/definitions';
import type { ActivityDeps } from './types';

export type LookDeps = Pick<ActivityDeps, 'pool' | 'providers' | 'logger'>;

/** What a look's write says when the attempt changed under it: decide again on the new row. */
export const LOOK_AGAIN = Symbol('look again');

/** PostgreSQL's check_violation: a CHECK or a guard trigger refused the write. */
export const CHECK_VIOLATION = '23514';

export type Looked = ReconcileOutcome | typeof LOOK_AGAIN;

export async function stillUnknown(
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
export async function failed(
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
export interface OneLook {
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

/** Settles by the certainty table, or says why an operator must. */
export async function onFailureEvidence(
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
export async function forAnOperator(
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

/** A lookup's answer of the work: recorded through the compare-and-swap when the contract takes it. */
export async function settledByAnswer(
  one: OneLook,
  output: unknown,
  source: string,
): Promise<Looked> {
  const { deps, attempt, job, contract, log } = one;
  const checked = checkOutput(contract, job.input, output, { attemptId: attempt.id });
  if (checked.ok)
    return recordResult(deps, { attemptId: attempt.id, result: checked.output, source });
  log.warn({ reason: checked.reason, source }, `the ${source}'s answer breaks the contract`);
  const detail = `the ${source === 'replay' ? 'replay' : 'status lookup'} answered, but ${checked.reason}; an operator must settle it`;
  // A replay's 2xx is the provider's answer to the very request: evidence of work, as the
  // call's own would be, so no "no record" after the key window may fail it.
  if (source === 'replay' && one.evidence.sideEffects)
    await settleAttemptWithoutResult(
      deps.pool,
      attempt.id,
      'unknown',
      { code: 'needs_operator', evidence: 'replay-off-contract', message: detail },
      output,
      true,
    );
  return stillUnknown(deps, attempt, detail, { needsOperator: true });
}
