import type { ModelRun } from './spin';

/**
 * What `npm run verify:model` checks, each run exhaustive within its bounds. The job kinds are
 * the model's JOB: 1 a charge (side effects, exclusive), 2 a summary one provider at a time,
 * 3 a summary hedged. Every run has 3 clients (two sending one intent, one another), 1 API
 * crash, 1 worker crash, and (unless said) 1 operator resolve, 1 operator cancel and 1 provider
 * callback. Two providers keep the full environment within a few GB; the three-provider runs
 * drop the operator and the callback instead.
 */
export const MODEL_RUNS: ModelRun[] = [
  { name: 'charge, 2 providers', defines: { JOB: 1, NP: 2 }, check: 'safety' },
  { name: 'summary, 2 providers', defines: { JOB: 2, NP: 2 }, check: 'safety' },
  {
    name: 'hedged, 2 providers, no callback',
    defines: { JOB: 3, NP: 2, NO_CALLBACK: true },
    check: 'safety',
  },
  {
    name: 'charge, 3 providers, no operator or callback',
    defines: { JOB: 1, NP: 3, NO_OPERATOR: true, NO_CALLBACK: true },
    check: 'safety',
  },
  {
    name: 'summary, 3 providers, no operator or callback',
    defines: { JOB: 2, NP: 3, NO_OPERATOR: true, NO_CALLBACK: true },
    check: 'safety',
  },
  { name: 'charge settles, 2 providers', defines: { JOB: 1, NP: 2 }, check: 'liveness' },
  {
    name: 'hedged settles, 2 providers, no operator or callback',
    defines: { JOB: 3, NP: 2, NO_OPERATOR: true, NO_CALLBACK: true },
    check: 'liveness',
  },
];

/**
 * Mistakes planted in the model (`-DBUG_…`): each must produce a counterexample, which shows
 * that the properties and the bounds can catch it.
 */
export const PLANTED_MODEL_BUGS: Record<string, ModelRun & { breaks: string }> = {
  BUG_NO_VERSION_CHECK: {
    name: 'compare-and-swap without its version check',
    defines: { JOB: 2, NP: 2, BUG_NO_VERSION_CHECK: true },
    check: 'safety',
    breaks: 'a recorded outcome never changes',
  },
  BUG_UNKNOWN_AS_FAILED: {
    name: 'an ambiguous failure taken for a failure',
    defines: { JOB: 1, NP: 2, BUG_UNKNOWN_AS_FAILED: true },
    check: 'safety',
    breaks: 'a failed attempt of a job with side effects did nothing',
  },
  BUG_NOT_FOUND_ONCE: {
    name: 'one "no record" believed while the call could still land',
    defines: { JOB: 1, NP: 2, BUG_NOT_FOUND_ONCE: true },
    check: 'safety',
    breaks: 'a failed attempt of a job with side effects did nothing',
  },
  BUG_NO_IN_FLIGHT_GUARD: {
    name: 'an exclusive attempt started past an unknown one',
    defines: { JOB: 1, NP: 2, BUG_NO_IN_FLIGHT_GUARD: true },
    check: 'safety',
    breaks: 'no new exclusive attempt while another is starting, running or unknown',
  },
};
