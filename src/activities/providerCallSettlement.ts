/**
 * What a provider call's answer makes of its attempt: a result through the compare-and-swap, or
 * an end without one (failed or unknown, by the certainty table), with the call's ledger line.
 */
import type { CallJob } from '../db/attemptCalls';
import type { AttemptRecord } from '../db/attempts';
import { endCallWithoutResult } from '../db/attemptSettlement';
import { isSuccessStatus, unreadSuccessVerdict } from '../domain/certainty';
import { checkOutput, type AnyJobTypeContract } from '../jobTypes';
import type { Logger } from '../logger';
import { costOfCall } from '../providers/pricing';
import { VIOLATION_CODES, type Provider } from '../providers/provider';
import { attemptOutcome, recordResult } from '../service/results';
import type { AttemptOutcome } from '../workflows/definitions';
import type { CallAnswer } from './providerCallRequest';
import type { ActivityDeps } from './types';

/** Settles the attempt of an ended call; says how certain what the provider did is, and its cost. */
export async function settleCall(
  deps: Pick<ActivityDeps, 'pool' | 'logger' | 'metrics'>,
  call: {
    attempt: AttemptRecord;
    token: string;
    job: CallJob;
    contract: AnyJobTypeContract;
    provider: Provider;
    sideEffects: boolean;
    log: Logger;
    isLate: () => boolean;
  },
  answer: CallAnswer,
) {
  const { pool, logger, metrics } = deps;
  const { attempt, token, job, contract, provider, sideEffects, log, isLate } = call;
  const { output, usage, reportedCost, failure, violation } = answer;
  // What the call cost is recorded whatever became of it: a loser, a broken answer and a
  // late one are paid for all the same.
  const cost = costOfCall(provider.config, {
    usage,
    reported: reportedCost,
    refusedBeforeWork: failure?.certainty === 'definite',
  });
  const ledger = { usage, cost };

  let outcome: AttemptOutcome;
  // The answer broke the contract: the ledger's `rejected` (continuous certification reads it).
  let rejected = false;
  // Whether what the provider did is known: an ambiguous failure, or a broken answer where
  // there are side effects, leaves it open.
  let certaintyOfCall = 'definite';
  if (failure) {
    // A 2xx whose body could not be read whole (over the cap, cut off, still coming when the
    // window closed) is the certainty table's own row; for any other error, with nothing
    // that could have had an effect, an ended call that brought no answer is over.
    const unread = isSuccessStatus(failure.httpStatus)
      ? unreadSuccessVerdict(sideEffects)
      : undefined;
    // planted-bug site (tools/chaos/plantedBugs.ts): unknown-as-failed
    const failed = unread
      ? unread.settle === 'failed'
      : failure.certainty === 'definite' || !sideEffects;
    const certainty = unread?.certainty ?? failure.certainty;
    certaintyOfCall = certainty;
    log.warn({ certainty, code: failure.code, late: isLate(), failed }, 'provider call failed');
    outcome = await attemptOutcome(
      pool,
      await endCallWithoutResult(
        pool,
        attempt.id,
        token,
        { ...ledger, outcome: 'failed' },
        {
          state: failed ? 'failed' : 'unknown',
          error: {
            code: failure.code,
            certainty,
            ...(failure.httpStatus === undefined ? {} : { httpStatus: failure.httpStatus }),
            ...(failure.detail ? { provider: failure.detail } : {}),
            message: failure.message,
            ...(failed && certainty === 'ambiguous'
              ? { settledBecause: 'no side effects, and the call has ended' }
              : {}),
          },
          // A 2xx from a provider with side effects: evidence of work (certainty.ts).
          ...(unread?.settle === 'unknown' ? { successAnswered: true } : {}),
        },
      ),
    );
  } else {
    const checked = violation
      ? { ok: false as const, reason: violation.message, issues: [violation.message] }
      : checkOutput(contract, job.input, output, { attemptId: attempt.id });
    // Truncated, refused, format ignored: each its own code; else the contract's checks.
    const code = violation ? VIOLATION_CODES[violation.kind] : 'contract_violation';
    if (checked.ok) {
      // The call's end is written by the compare-and-swap's own transaction, which alone
      // says whether the answer won: whoever sees the job end sees what the call cost.
      outcome = await recordResult(
        { pool, logger, metrics },
        {
          attemptId: attempt.id,
          result: checked.output,
          source: isLate() ? 'late-result' : 'provider',
          callEnd: { ...ledger, token },
        },
      );
      // Its answer came after a verdict settled the attempt (this worker wrote it past the
      // provider's grace): kept as a race, and its owner is told (job.late_result).
      if (outcome.state === 'failed' || outcome.state === 'cancelled')
        log.error(
          { event: 'result_after_verdict', state: outcome.state, sideEffects },
          'the provider answered success after the attempt was settled without a result: the work may have been done',
        );
    } else {
      rejected = true;
      if (sideEffects) certaintyOfCall = 'ambiguous';
      // The raw answer stays on the attempt, never on the job.
      log.warn({ code, issues: checked.issues, sideEffects }, 'provider output rejected');
      const raw = violation ? violation.rawOutput : output;
      outcome = await attemptOutcome(
        pool,
        await endCallWithoutResult(
          pool,
          attempt.id,
          token,
          { ...ledger, outcome: 'rejected' },
          sideEffects
            ? {
                state: 'unknown',
                error: {
                  code: 'contract_violation_after_effect',
                  violation: code,
                  message: `the provider answered success, but ${checked.reason}. It may have taken effect: only a status lookup whose answer satisfies the contract, a signed callback or an operator settles it`,
                  issues: checked.issues,
                },
                rawOutput: raw,
                // A 2xx from a provider with side effects: evidence of work (certainty.ts),
                // written with the call's end.
                successAnswered: true,
              }
            : {
                state: 'failed',
                error: { code, message: checked.reason, issues: checked.issues },
                rawOutput: raw,
              },
        ),
      );
    }
  }
  return { outcome, certaintyOfCall, cost, rejected };
}
