import { admissionHoldOf } from '../db/admissionHolds';
import { settleAttemptsLeftByEndings, unknownAttemptsOfEndedJobs } from '../db/attemptSettlement';
import { findOpenJobs, type JobPageCursor } from '../db/jobLists';
import { addJobNote, addNoteIfOpen, countSweepFailure, type JobRecord } from '../db/jobs';
import { DEFAULTS } from '../domain/defaults';
import { isOpenRunStatus } from '../domain/runStatus';
import type { Logger } from '../logger';
import type { jobWorkflow } from '../workflows';
import type { ReconcileOutcome } from '../workflows/definitions';
import { temporalRefusalReason } from './errors';
import { ensureJobWorkflow, startOptionsOf, type JobServiceDeps } from './jobs';
import {
  endStuckRunsOfEndedJobs,
  latestRunStatus,
  STUCK_AFTER_PAUSE,
  stuckAfterPause,
} from './stuckRuns';

export interface SweepOptions {
  /** Leave jobs younger than this to the API request that is starting their workflow now. */
  olderThanMs: number;
  batchSize?: number;
}

export interface SweepReport {
  /** Open jobs whose workflow never ran, started now. */
  started: number;
  /** Open jobs whose workflow had closed (terminated, timed out, failed), given a new run. */
  restarted: number;
  /** Open jobs whose workflow closed too often: left for an operator. */
  needOperator: number;
  /** Open jobs whose workflow Temporal refuses to start (logged; tried again next sweep). */
  refused: number;
  /** Runs a pause left stuck under a job that has ended meanwhile, ended now. */
  endedStuck: number;
  /** Jobs whose handling failed otherwise (logged and counted; the sweep went on). */
  failed: number;
}

/** A sweep's report before it has done anything (and a sweep's that found nothing to do). */
export function nothingSwept(): SweepReport {
  return { started: 0, restarted: 0, needOperator: 0, refused: 0, endedStuck: 0, failed: 0 };
}

/** A job whose workflow keeps closing while it is open needs a human, not another run. */
export const MAX_WORKFLOW_RESTARTS = 5;

type SweepDeps = Pick<JobServiceDeps, 'pool' | 'temporal' | 'taskQueue'>;

/**
 * Visits the open jobs of one pass, a page at a time. One job whose visit fails is logged and
 * counted (`onejob_sweep_failures_total{pass}`), and the jobs after it are still visited.
 */
async function forEachOpenJob(
  deps: SweepDeps,
  options: SweepOptions & { admitted: boolean },
  visit: (job: JobRecord) => Promise<void>,
  onFailure: (job: JobRecord, error: unknown) => void,
): Promise<void> {
  const limit = options.batchSize ?? DEFAULTS.sweepBatchSize;
  const pass = options.admitted ? 'restart' : 'start';
  let after: JobPageCursor | undefined;
  for (;;) {
    const jobs = await findOpenJobs(deps.pool, { ...options, limit, after });
    for (const job of jobs) {
      try {
        await visit(job);
      } catch (error) {
        onFailure(job, error);
        await countSweepFailure(deps.pool, pass).catch(() => undefined);
      }
    }
    const last = jobs[jobs.length - 1];
    if (!last || jobs.length < limit) return;
    after = { createdAtMicros: last.createdAtMicros, id: last.id };
  }
}

/**
 * Heals open jobs that nobody is running:
 * - jobs whose workflow never ran (the API crashed between the insert and the start, and the
 *   client did not retry; or another entry point's run held the id and was refused): their
 *   workflow is started;
 * - jobs whose workflow closed while the row is open (terminated from the Web UI or CLI, a run
 *   timeout): a new run continues the job from its rows (attempts in flight become unknown and
 *   are reconciled), with a note on the job. After MAX_WORKFLOW_RESTARTS such restarts the job
 *   is left open with a note that it needs an operator (`onejob jobs cancel` still works).
 * Starting is idempotent (a running run is reused), so overlapping sweeps are harmless.
 */
export async function sweepJobs(
  deps: SweepDeps,
  options: SweepOptions,
  logger?: Logger,
): Promise<SweepReport> {
  const report = nothingSwept();
  const failed = (job: JobRecord, error: unknown): void => {
    report.failed += 1;
    logger?.error(
      { err: error, jobId: job.id, workflowId: job.workflowId },
      'sweeper could not handle a job; the sweep goes on',
    );
  };
  await forEachOpenJob(
    deps,
    { ...options, admitted: false },
    async (job) => {
      // Held by an operator, it is not to be admitted yet: its run (if any) waits, and one is
      // started for it once the hold is released.
      if (await admissionHoldOf(deps.pool, job.id)) return;
      try {
        await ensureJobWorkflow(deps, job);
      } catch (error) {
        // One job the engine will not start must not keep the sweeper from the ones after it.
        const reason = temporalRefusalReason(error);
        if (reason === undefined) throw error;
        report.refused += 1;
        logger?.error(
          { jobId: job.id, workflowId: job.workflowId, engineReason: reason },
          'Temporal refused to start a job workflow; an operator must fix the engine or the job',
        );
        return;
      }
      report.started += 1;
      logger?.info({ jobId: job.id, workflowId: job.workflowId }, 'sweeper started a workflow');
    },
    failed,
  );
  await forEachOpenJob(
    deps,
    { ...options, admitted: true },
    async (job) => {
      let latest = await latestRunStatus(deps, job.workflowId);
      let why = 'the job was open but its workflow had closed';
      if (isOpenRunStatus(latest.name)) {
        if (!(await stuckAfterPause(deps, job.workflowId, latest))) return;
        // Its task fails at every try and nothing else ends it: the run is given up as a
        // terminate would, and the job goes on in a new run below (attempts are adopted).
        await deps.temporal.workflow
          .getHandle(job.workflowId, latest.runId)
          .terminate(STUCK_AFTER_PAUSE);
        logger?.warn({ jobId: job.id, workflowId: job.workflowId }, STUCK_AFTER_PAUSE);
        latest = { name: 'TERMINATED', runId: latest.runId };
        why = STUCK_AFTER_PAUSE;
      }
      const restarts = job.notes.filter(
        (note) => (note as { event?: string }).event === 'workflow_restarted',
      ).length;
      if (restarts >= MAX_WORKFLOW_RESTARTS) {
        await addJobNote(deps.pool, job.id, {
          event: 'needs_operator',
          reason: `its workflow closed ${restarts + 1} times while the job was open`,
        });
        report.needOperator += 1;
        logger?.error({ jobId: job.id, workflowId: job.workflowId }, 'job needs an operator');
        return;
      }
      // The listing is older than this moment: the job may have ended meanwhile (its closing
      // run had just written the row). The note is written only while it is open, and decides.
      const stillOpen = await addNoteIfOpen(deps.pool, job.id, {
        event: 'workflow_restarted',
        closedRun: latest.runId ?? null,
        closedAs: latest.name,
        reason: why,
      });
      if (!stillOpen) return;
      const options = startOptionsOf(job, deps.taskQueue);
      // Any closed run may be followed now: this job is open and nothing runs it.
      await deps.temporal.workflow.start<typeof jobWorkflow>(options.workflowType, {
        ...options,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      });
      report.restarted += 1;
      logger?.warn(
        { jobId: job.id, workflowId: job.workflowId, closedAs: latest.name },
        'sweeper restarted the workflow of an open job',
      );
    },
    failed,
  );
  report.endedStuck = await endStuckRunsOfEndedJobs(deps, logger);
  return report;
}

export interface SettlingReport {
  /** Attempts an ending left starting or running, settled now (cancelled, or unknown). */
  leftByEndings: number;
  /** Unknown attempts of ended jobs looked at again. */
  looked: number;
  /** Of those, settled now (a status lookup's answer, a held callback, a call that is over). */
  settled: number;
  /** Looked at, but the look failed (logged; tried again next sweep). */
  failed: number;
}

/**
 * A job that ended (an operator's cancel, say) while one of its attempts was `unknown` keeps
 * that attempt reconciled here, since its workflow has closed (and one that an ending left
 * `starting` or `running` is first settled as the ending would have): status lookups, held callbacks
 * and the not-found rule go on until it settles, so the attempt, its ledger line and the gauges
 * say whether money moved. A success found now loses the compare-and-swap to the job's ending
 * and is kept as a race, as a late answer is. Late answers, callbacks and operators' verdicts
 * settle such attempts on their own paths too. One attempt whose look fails is logged and
 * counted, and the others are still looked at.
 */
export async function reconcileAttemptsOfEndedJobs(
  deps: {
    pool: SweepDeps['pool'];
    reconcile: (input: { attemptId: string }) => Promise<ReconcileOutcome>;
  },
  logger?: Logger,
  batchSize: number = DEFAULTS.sweepBatchSize,
): Promise<SettlingReport> {
  // First what an ending left in flight (it becomes unknown, and is looked at below).
  const report: SettlingReport = {
    leftByEndings: await settleAttemptsLeftByEndings(deps.pool, batchSize),
    looked: 0,
    settled: 0,
    failed: 0,
  };
  if (report.leftByEndings > 0)
    logger?.warn(
      { settled: report.leftByEndings },
      'sweeper settled attempts an ending had left in flight',
    );
  let after = '';
  for (;;) {
    const ids = await unknownAttemptsOfEndedJobs(deps.pool, { after, limit: batchSize });
    for (const attemptId of ids) {
      report.looked += 1;
      try {
        const outcome = await deps.reconcile({ attemptId });
        if (outcome.state !== 'unknown') {
          report.settled += 1;
          logger?.info(
            { attemptId, state: outcome.state, jobStatus: outcome.jobStatus },
            'sweeper settled an unknown attempt of an ended job',
          );
        }
      } catch (error) {
        report.failed += 1;
        logger?.error({ err: error, attemptId }, 'could not reconcile an attempt of an ended job');
      }
    }
    if (ids.length < batchSize) return report;
    after = ids[ids.length - 1]!;
  }
}
