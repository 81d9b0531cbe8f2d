import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { AttemptRecord } from '../db/attempts';
import type { JobEndings } from '../db/jobEndings';
import { listOwnedJobs, type JobPageCursor, type OwnedPageOptions } from '../db/jobLists';
import { findJobByKey, type JobRecord } from '../db/jobs';
import { claimStartLease, giveBackStartLease } from '../db/jobStartLease';
import { findOwnedJobWithAttempts } from '../db/jobWithAttempts';
import type { Pool } from '../db/pool';
import { DEFAULTS } from '../domain/defaults';
import { isUuid } from '../domain/identity';
import { isTerminalJobStatus, type JobMode } from '../domain/job';
import type { OwnerLimitSettings } from '../domain/ownerLimits';
import { isOpenRunStatus } from '../domain/runStatus';
import { jobWorkflowId } from '../domain/workflowId';
import type { ProviderRegistry } from '../providers/registry';
import type { jobWorkflow } from '../workflows';
import type { JobWorkflowInput } from '../workflows/definitions';
import { jobWorkflowStartOptions } from '../workflows/startOptions';
import { refuseCreateOverBudget } from './budgets';
import { keyReusedFor, temporalRefusalReason, WorkflowStartRefusedError } from './errors';
import { intentFingerprint, validateIntent } from './intent';
import { CreateRateLimitedError, insertJobWithinLimits, TooManyOpenJobsError } from './ownerLimits';

export interface JobServiceDeps {
  pool: Pool;
  temporal: Client;
  taskQueue: string;
  providers: ProviderRegistry;
  /** What each owner may create (rate, open jobs); undefined: no limits. */
  ownerLimits?: OwnerLimitSettings;
}

export interface CreateJobRequest {
  ownerId: string;
  idempotencyKey: string;
  type: string;
  input: Record<string, unknown>;
  providers?: string[];
  mode?: JobMode;
}

export interface JobWithAttempts {
  job: JobRecord;
  attempts: AttemptRecord[];
}

/** The start options of an existing job row's workflow. */
export function startOptionsOf(job: JobRecord, taskQueue: string) {
  return jobWorkflowStartOptions(
    {
      jobId: job.id,
      workflowId: job.workflowId,
      ownerId: job.ownerId,
      idempotencyKey: job.idempotencyKey,
      type: job.type,
      providers: job.providers,
      mode: job.mode,
      requestFingerprint: job.requestFingerprint,
      status: job.status,
      attemptCount: job.attemptCount,
    },
    taskQueue,
  );
}

const isAlreadyStarted = (error: unknown): boolean =>
  error instanceof WorkflowExecutionAlreadyStartedError ||
  (error as Error)?.name === 'WorkflowExecutionAlreadyStartedError';

/** The input the running run of a workflow id was started with, if one is running. */
async function runningRunInput(
  temporal: Client,
  workflowId: string,
): Promise<JobWorkflowInput | undefined> {
  const handle = temporal.workflow.getHandle(workflowId);
  const description = await handle.describe();
  if (!isOpenRunStatus(description.status.name)) return undefined;
  const { history } = await temporal.workflowService.getWorkflowExecutionHistory({
    namespace: temporal.options.namespace,
    execution: { workflowId, runId: description.runId },
    maximumPageSize: 1,
  });
  const payload =
    history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return payload
    ? temporal.options.loadedDataConverter.payloadConverter.fromPayload<JobWorkflowInput>(payload)
    : undefined;
}

/** Whether a run started with this input runs this job row (or will adopt it at admission). */
function runsJob(input: JobWorkflowInput, job: JobRecord): boolean {
  if (input.carried) return input.carried.plan.jobId === job.id;
  if (input.jobId) return input.jobId === job.id;
  return input.requestFingerprint === job.requestFingerprint;
}

/** How long a create waits for another entry point's refused run to close before starting its own. */
const FOREIGN_RUN_WAIT_MS = 10_000;

/**
 * Makes sure the job's workflow runs. Safe to call any number of times: a running run of this
 * job is reused, and a closed one is never started again unless it failed (see
 * jobWorkflowStartOptions). One race needs more: a Temporal-native start with another intent
 * under the same (owner, key) may hold the workflow id while this row won the database. That
 * run's admission refuses the row and fails within moments; this job's run starts after it.
 * (Should that take longer, the sweeper starts it.)
 */
export async function ensureJobWorkflow(
  deps: Pick<JobServiceDeps, 'temporal' | 'taskQueue'>,
  job: JobRecord,
): Promise<void> {
  const options = startOptionsOf(job, deps.taskQueue);
  const start = (conflict: 'FAIL' | 'USE_EXISTING') =>
    deps.temporal.workflow.start<typeof jobWorkflow>(options.workflowType, {
      ...options,
      workflowIdConflictPolicy: conflict,
    });
  try {
    // FAIL first: the common case (nobody holds the id) costs one call and proves the run is ours.
    await start('FAIL');
    return;
  } catch (error) {
    if (!isAlreadyStarted(error)) throw error;
  }
  const running = await runningRunInput(deps.temporal, job.workflowId);
  if (!running || runsJob(running, job)) return;
  const foreign = deps.temporal.workflow.getHandle(job.workflowId);
  await Promise.race([
    foreign.result().catch(() => undefined),
    new Promise((resolve) => setTimeout(resolve, FOREIGN_RUN_WAIT_MS).unref()),
  ]);
  try {
    await start('USE_EXISTING');
  } catch (error) {
    if (!isAlreadyStarted(error)) throw error;
  }
}

/**
 * One job per (owner, key). The database decides whether this request is new; a replay with
 * the same intent gets the same job, a different intent under the same key is refused.
 */
export async function createJob(
  deps: JobServiceDeps,
  request: CreateJobRequest,
): Promise<{ job: JobRecord; created: boolean }> {
  // A request today's rules accept goes straight to the insert-or-find, which answers a new key
  // and a replay alike in one statement. One they refuse may still replay a job stored under
  // earlier rules (keys never expire, so a provider removed since or a tightened schema must not
  // turn a retry into a refusal): only then is the key looked up first.
  let validated: ReturnType<typeof validateIntent>;
  try {
    validated = validateIntent(deps, request);
  } catch (error) {
    const stored = await findJobByKey(deps.pool, request.ownerId, request.idempotencyKey);
    if (stored && stored.requestFingerprint === replayFingerprint(request))
      return answerReplay(deps, stored);
    throw error;
  }
  const { input, plan, mode, fingerprint } = validated;
  await refuseCreateOverBudget(deps.pool, request);
  const { job, created } = await insertJobWithinLimits(deps, {
    ownerId: request.ownerId,
    idempotencyKey: request.idempotencyKey,
    requestFingerprint: fingerprint,
    intent: { type: request.type, input, providers: plan, mode },
    workflowId: jobWorkflowId(request.ownerId, request.idempotencyKey),
    workflowIdOfGeneration: (generation) =>
      jobWorkflowId(request.ownerId, request.idempotencyKey, generation),
    startLeaseMs: DEFAULTS.startLeaseMs,
  }).catch(async (error: unknown) => {
    // Refused as new, but a racing request under the same key may have made the job meanwhile:
    // then this is a replay, and a replay is never refused for the owner's limits.
    if (!(error instanceof CreateRateLimitedError || error instanceof TooManyOpenJobsError))
      throw error;
    const raced = await findJobByKey(deps.pool, request.ownerId, request.idempotencyKey);
    if (!raced) throw error;
    return { job: raced, created: false };
  });
  if (!created && job.requestFingerprint !== fingerprint) throw keyReusedFor(job);
  if (created) await startJobWorkflow(deps, job);
  else await answerReplay(deps, job);
  return { job, created };
}

/**
 * The fingerprint a replay would have; undefined when the request has none (a number JSON
 * cannot hold, such as 1e309): no stored job can match it, and validation says what is wrong.
 */
function replayFingerprint(request: CreateJobRequest): string | undefined {
  try {
    return intentFingerprint(request);
  } catch {
    return undefined;
  }
}

/**
 * A replay's answer: the job as stored, from the row alone. A job not yet admitted by its
 * workflow is being started by the request that inserted it, which holds a lease on that: its
 * duplicates (a double click, a storm of retries) answer `pending` without calling Temporal,
 * so a new key costs one workflow start, not one per duplicate. Only once the lease has passed
 * (its creator crashed between the insert and the start, or Temporal refused the start) does
 * one duplicate take it over and start the workflow: the retry heals the crash.
 */
async function answerReplay(
  deps: JobServiceDeps,
  job: JobRecord,
): Promise<{ job: JobRecord; created: false }> {
  if (!job.admittedAt && (await claimStartLease(deps.pool, job.id, DEFAULTS.startLeaseMs)))
    await startJobWorkflow(deps, job);
  return { job, created: false };
}

async function startJobWorkflow(deps: JobServiceDeps, job: JobRecord): Promise<void> {
  try {
    await ensureJobWorkflow(deps, job);
  } catch (error) {
    // Whoever comes next (a retry, a duplicate, the sweeper) tries at once, not after the lease.
    await giveBackStartLease(deps.pool, job.id).catch(() => undefined);
    const reason = temporalRefusalReason(error);
    if (reason !== undefined) throw new WorkflowStartRefusedError(job, reason);
    throw error;
  }
}

/** How a wait looks at its job: the first looks come fast (most jobs end quickly). */
const FIRST_POLL_MS = 50;
const LONGEST_POLL_MS = 1_000;

export type WaitOptions = {
  waitMs?: number;
  signal?: AbortSignal;
} & (
  | { endings?: undefined }
  | {
      /** Job endings as PostgreSQL announces them: the wait wakes at once instead of at its next look. */
      endings: Pick<JobEndings, 'listening' | 'watch'>;
      /** Between looks at the row while `endings` is listening. */
      pollMs: number;
    }
);

/**
 * A job of this owner (another owner's job does not exist for them), with its attempts.
 * With `waitMs`, holds on until the job is terminal, the wait ends, or `signal` aborts (the
 * client went away): an abandoned wait costs no more queries.
 */
export async function getJob(
  deps: Pick<JobServiceDeps, 'pool'>,
  ownerId: string,
  given: string,
  options: WaitOptions = {},
): Promise<JobWithAttempts | undefined> {
  if (!isUuid(given)) return undefined;
  // One spelling of the id from here on: the job-ending notification names it in lower case.
  const jobId = given.toLowerCase();
  const deadline = Date.now() + (options.waitMs ?? 0);
  const signal = options.signal;
  // Watching before the first look, so that an ending between a look and a sleep is not missed.
  const ending = options.waitMs ? options.endings?.watch(jobId) : undefined;
  let backoffMs = FIRST_POLL_MS;
  try {
    for (;;) {
      // The job and its attempts in one statement: most looks are also the last.
      // planted-bug site (tools/chaos/plantedBugs.ts): unreachable-database-as-not-found
      const found = await findOwnedJobWithAttempts(deps.pool, ownerId, jobId);
      if (!found) return undefined;
      if (isTerminalJobStatus(found.job.status) || Date.now() >= deadline || signal?.aborted)
        return found;
      // Heard endings wake the wait, so it looks rarely; without them it polls, backing off.
      const pollMs = options.endings?.listening ? options.pollMs : backoffMs;
      const sleepMs = Math.min(pollMs, Math.max(0, deadline - Date.now()));
      await (ending ? ending.sleep(sleepMs, signal) : sleep(sleepMs, signal));
      if (signal?.aborted) return undefined;
      backoffMs = Math.min(backoffMs * 2, LONGEST_POLL_MS);
    }
  } finally {
    ending?.stop();
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });
}

export async function listJobs(
  deps: Pick<JobServiceDeps, 'pool'>,
  ownerId: string,
  options: OwnedPageOptions,
): Promise<{ jobs: JobRecord[]; next?: JobPageCursor }> {
  return listOwnedJobs(deps.pool, ownerId, options);
}
