/** Providers' signed callbacks: a result or a failure reported after the fact. */
import { reportAttemptFailure } from '../db/attemptFailureReports';
import { findCallbackReceipt, saveCallbackReceipt } from '../db/callbacks';
import { checkJobResult } from '../jobTypes';
import type { AttemptOutcome } from '../workflows/definitions';
import { jobOfAttempt, senderDeps, type AttemptServiceDeps } from './attempts';
import { ServiceError } from './errors';
import { attemptOutcome, nudgeOrHandOver, recordResult } from './results';

/** A signed callback, as the API verified it: who signed, when, and its digest. */
export interface SignedCallback {
  provider: string;
  signedAt: Date;
  digest: string;
}

/**
 * A provider reports the outcome of an attempt after the fact (a webhook). A result goes through
 * the same compare-and-swap as any other; a failure settles the attempt `failed` by the
 * certainty table (src/domain/certainty.ts): at once when its call is over without a success
 * answer, when the call ends if it may still answer, and never after a success answer.
 * The same signed callback again (a replay within its tolerance window) changes nothing and
 * nudges nobody: it is answered with what the first one came to.
 */
export async function acceptProviderCallback(
  deps: AttemptServiceDeps,
  signed: SignedCallback,
  report:
    | { attemptId: string; status: 'succeeded'; output: unknown }
    | { attemptId: string; status: 'failed'; error: string },
): Promise<{ outcome: AttemptOutcome; replayed: boolean } | undefined> {
  const earlier = await findCallbackReceipt(deps.pool, signed.provider, signed.digest);
  if (earlier) return { outcome: earlier.outcome as AttemptOutcome, replayed: true };
  const found = await jobOfAttempt(deps, report.attemptId);
  if (!found || found.attempt.provider !== signed.provider) return undefined;
  const { attempt, job } = found;
  let outcome: AttemptOutcome;
  if (report.status === 'failed') {
    // By the certainty table: it settles `failed` only once the call can no longer answer
    // success, and never after a success answer; until then it is held on the row.
    const settled = await reportAttemptFailure(deps.pool, attempt.id, {
      message: report.error,
      at: signed.signedAt.toISOString(),
    });
    if (settled.state !== 'failed')
      deps.logger.warn(
        {
          jobId: job.id,
          attemptId: attempt.id,
          state: settled.state,
          successAnswered: settled.successAnsweredAt !== null,
        },
        'failed callback held: the call may still answer, or it answered success',
      );
    outcome = await attemptOutcome(deps.pool, settled);
  } else {
    const checked = checkJobResult(job, report.output, attempt.id);
    if (!checked.ok)
      throw new ServiceError(
        'invalid-input',
        `the reported output breaks the ${job.type} contract: ${checked.reason}`,
      );
    outcome = await recordResult(deps, {
      attemptId: attempt.id,
      result: checked.output,
      source: `callback:${signed.provider}`,
    });
  }
  // Two deliveries of one callback at once: both settle the same way; only the first nudges.
  const first = await saveCallbackReceipt(deps.pool, { ...signed, attemptId: attempt.id, outcome });
  if (first) await nudgeOrHandOver(senderDeps(deps), job, attempt.id);
  return { outcome, replayed: !first };
}
