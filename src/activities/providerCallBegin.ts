/**
 * The begin of a provider call: only the execution whose begin moved the attempt to `running`
 * sends it; the others, and a call whose job type is unknown, end here without a request.
 */
import { beginProviderCallOfJob, type CallJob, type CallWindow } from '../db/attemptCalls';
import { keepFirstSend } from '../db/attemptReplays';
import type { AttemptRecord } from '../db/attempts';
import { endCallWithoutResult } from '../db/attemptSettlement';
import { FAILURES, typedFailure } from '../domain/failures';
import { findJobType, type AnyJobTypeContract } from '../jobTypes';
import type { Provider } from '../providers/provider';
import { attemptOutcome } from '../service/results';
import type { AttemptOutcome } from '../workflows/definitions';
import type { ActivityDeps } from './types';

/** A call this execution began, and so alone sends: with its token, its job and its contract. */
export interface CallToSend {
  attempt: AttemptRecord;
  token: string;
  job: CallJob;
  contract: AnyJobTypeContract;
}

/**
 * Begins an attempt's call (beginProviderCallOfJob): the call to send, or the attempt's outcome
 * when this execution sends nothing.
 */
export async function beginCall(
  deps: Pick<ActivityDeps, 'pool' | 'providers' | 'logger'>,
  attemptId: string,
  windows: Readonly<Record<string, CallWindow>>,
): Promise<CallToSend | AttemptOutcome> {
  const { pool, providers, logger } = deps;
  const begun = await beginProviderCallOfJob(pool, attemptId, windows);
  const { attempt } = begun;
  // Left `starting` because this worker has no such provider: nothing was sent, and the
  // workflow's abandonment makes the attempt `failed` (never sent), not `unknown`.
  if (attempt.state === 'starting' && !providers.has(attempt.provider))
    throw new Error(
      `this worker has no provider ${attempt.provider}, so attempt ${attempt.id} was not sent`,
    );
  if (begun.token === undefined) {
    // Another execution of this call began it (a run terminated or reset, a task delivered
    // twice): that one alone sends it and writes what it came to. This one sends nothing
    // and writes nothing; a settled attempt is reported as it is.
    if (attempt.state !== 'running') return attemptOutcome(pool, attempt);
    logger.warn(
      { event: 'call_begun_elsewhere', attemptId: attempt.id, jobId: attempt.jobId },
      'another execution began this call; this one sent nothing and wrote nothing',
    );
    // The workflow stops waiting for this execution: its abandonment makes the attempt
    // `unknown`, and the call's own end (or a look) settles it.
    // planted-bug site (tools/chaos/plantedBugs.ts): begin-returns-nothing
    throw typedFailure(
      FAILURES.callBegunElsewhere,
      `attempt ${attempt.id}: its call was begun by another execution; this one sent nothing`,
    );
  }
  const { token, job } = begun;
  const contract = findJobType(job.type);
  if (!contract) {
    return attemptOutcome(
      pool,
      await endCallWithoutResult(
        pool,
        attempt.id,
        token,
        { outcome: 'failed' },
        {
          state: 'failed',
          error: {
            code: 'no_contract',
            message: `job type of ${attempt.id} is unknown; nothing was sent`,
          },
        },
      ),
    );
  }
  return { attempt, token, job, contract };
}

/**
 * For a provider whose lost answers are looked up by replay: the request's bytes, kept in
 * PostgreSQL before they leave (its key window counts from then). If they cannot be kept,
 * nothing is sent: the call ends `failed` (never sent) rather than go out unreplayable.
 */
export async function keepForReplay(
  deps: Pick<ActivityDeps, 'pool'>,
  call: CallToSend,
  provider: Provider,
): Promise<{ body: Uint8Array | undefined } | AttemptOutcome> {
  const { replay } = provider;
  if (!replay) return { body: undefined };
  const body = replay.bytesOf(call.job.input);
  try {
    await keepFirstSend(deps.pool, call.attempt.id, body, replay.window);
  } catch (error) {
    return attemptOutcome(
      deps.pool,
      await endCallWithoutResult(
        deps.pool,
        call.attempt.id,
        call.token,
        { outcome: 'failed' },
        {
          state: 'failed',
          error: {
            code: 'never_sent',
            message: `its request could not be kept for a replay (${(error as Error).message}); nothing was sent`,
          },
        },
      ),
    );
  }
  return { body };
}
