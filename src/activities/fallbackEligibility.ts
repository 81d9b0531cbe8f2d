/**
 * Continuous certification where a job's later fallbacks and hedges are chosen. Admission
 * leaves a provider that lost its eligibility out of the plan (admissionPlan.ts); a job
 * admitted before the loss meets it here, when its workflow creates the attempt: the provider
 * is passed by as one cooling down is (the workflow goes on with its plan, and only when
 * nothing else is left asks again after ONEJOB_DECERTIFIED_RECHECK_MS), so no workflow code
 * changes. A plan's primary keeps its place unless ONEJOB_REQUIRE_CERTIFIED_PRIMARY is set.
 */
import { addCountedJobNote, findJob } from '../db/jobs';
import { jobAndDecertifications, type Decertification } from '../db/providerEligibility';
import { Refusal } from '../domain/failures';
import { contractVersion, findJobType } from '../jobTypes';
import { providerModel } from '../providers/provider';
import { endJobWithoutResult } from '../service/results';
import type { ActivityDeps } from './types';

/** What a skip note says of a provider that lost its eligibility. */
export function lostEligibilityReason(
  lost: Pick<
    Decertification,
    'jobType' | 'contractVersion' | 'decertifiedAt' | 'rate' | 'lowerBound' | 'calls'
  >,
): string {
  const percent = (share: number): string => `${(share * 100).toFixed(1)} %`;
  return `lost fallback and hedge eligibility for the ${lost.jobType} contract ${lost.contractVersion} at ${lost.decertifiedAt.toISOString()}: ${percent(lost.rate)} of its last ${lost.calls} answers broke the contract (lower bound ${percent(lost.lowerBound)}); a passing onejob providers certify restores it`;
}

type StartAttempt<Result> = (input: {
  jobId: string;
  seq: number;
  provider: string;
  exclusive: boolean;
}) => Promise<Result>;

const DEFAULT_RECHECK_MS = 1_000;

/**
 * `startAttempt`, refusing (providerUnavailable, counted as `decertified`) an attempt on a
 * provider that lost its eligibility for the job's contract, unless it is the plan's primary
 * (kept) or the attempt was written already (an activity's retry finds its own row).
 */
export function withFallbackEligibility<Result>(
  deps: Pick<
    ActivityDeps,
    'pool' | 'providers' | 'requireCertifiedPrimary' | 'decertifiedRecheckMs' | 'metrics'
  >,
  startAttempt: StartAttempt<Result>,
): StartAttempt<Result> {
  return async (input) => {
    const { pool, providers } = deps;
    if (!providers.has(input.provider)) return startAttempt(input);
    const found = await jobAndDecertifications(pool, input.jobId, input.provider, input.seq);
    const contract = found && findJobType(found.jobType);
    if (!found || !contract || found.written) return startAttempt(input);
    if (found.primary === input.provider && deps.requireCertifiedPrimary !== true)
      return startAttempt(input);
    const version = contractVersion(contract);
    const model = providerModel(providers.get(input.provider).config);
    const lost = found.lost.find((l) => l.contractVersion === version && l.model === model);
    if (!lost) return startAttempt(input);
    const reason = lostEligibilityReason({ ...lost, jobType: found.jobType });
    const recheckMs = deps.decertifiedRecheckMs ?? DEFAULT_RECHECK_MS;
    const until = new Date(Date.now() + recheckMs).toISOString();
    // Asked again for the same loss: the plan had nothing else left. With nothing of the job
    // in flight it ends as admission ends a job with no certified provider left, never waiting
    // for a re-certification that may not come.
    const job = await findJob(pool, input.jobId);
    const askedBefore = job?.notes.some(
      (note) =>
        (note as { event?: unknown }).event === 'provider_skipped' &&
        (note as { provider?: unknown }).provider === input.provider &&
        (note as { reason?: unknown }).reason === reason,
    );
    if (askedBefore) {
      const failure = {
        code: 'no-certified-provider',
        message: `no eligible provider is left for this job: ${input.provider} ${reason}`,
      };
      const ended = await endJobWithoutResult(deps, input.jobId, 'failed', failure, true);
      if (ended.terminalStatus)
        throw new Refusal('jobNotOpen', `job ${input.jobId} is ${ended.terminalStatus}`, {
          terminalStatus: ended.terminalStatus,
          completedBy: ended.completedBy,
        });
    }
    // Once per loss, however often the job asks again (the note has no time of its own).
    await addCountedJobNote(
      pool,
      input.jobId,
      { event: 'provider_skipped', provider: input.provider, reason },
      'provider_skips',
      `${input.provider}|decertified`,
    );
    throw new Refusal(
      'providerUnavailable',
      `provider ${input.provider} takes no new fallback or hedge attempt: ${reason}`,
      {
        provider: input.provider,
        reason,
        until,
        retryAfterSeconds: Math.max(1, Math.ceil(recheckMs / 1000)),
      },
      'decertified',
    );
  };
}
