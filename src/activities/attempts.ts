import { scheduleNextCheck } from '../db/attemptChecks';
import type { AttemptRecord } from '../db/attempts';
import { settleAbandonedAttempt } from '../db/attemptSettlement';
import { addCountedJobNote, addJobNote } from '../db/jobs';
import { isRefusal } from '../domain/failures';
import { breakerCoolOffMs } from '../providers/provider';
import { attemptOutcome } from '../service/results';
import type { AttemptLook, AttemptOutcome, ReconcileOutcome } from '../workflows/definitions';
import { lookAtAttempt } from './attemptLook';
import { createWithinBudget, refusedByBudget } from './budgetGate';
import type { ActivityDeps } from './types';

type LookDeps = Pick<
  ActivityDeps,
  'pool' | 'providers' | 'logger' | 'reconcileFirstDelayMs' | 'reconcileMaxDelayMs' | 'metrics'
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

    /**
     * Creates attempt `seq` in state `starting`; refused (providerUnavailable, jobNotOpen,
     * attemptInFlight: typed at the boundary) when it may not.
     */
    async startAttempt(input: {
      jobId: string;
      seq: number;
      provider: string;
      exclusive: boolean;
    }): Promise<{ id: string; state: AttemptRecord['state'] }> {
      try {
        const attempt = await createWithinBudget(deps, {
          ...input,
          ...(providers.has(input.provider)
            ? { coolOffMs: breakerCoolOffMs(providers.get(input.provider).config) }
            : {}),
        });
        return { id: attempt.id, state: attempt.state };
      } catch (error) {
        if (isRefusal(error, 'budgetExceeded'))
          throw await refusedByBudget(deps, input.jobId, error);
        if (isRefusal(error, 'providerUnavailable')) {
          const { provider, reason, until } = error.details;
          // The job says why its plan passed the provider by: once per reason and time, and
          // once per hold (a held job asks again and again until the hold is released).
          const held = error.countedAs === 'held';
          await addCountedJobNote(
            pool,
            input.jobId,
            { event: 'provider_skipped', provider, reason, ...(held ? { held } : { until }) },
            'provider_skips',
            `${provider}|${error.countedAs}`,
          );
        }
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
