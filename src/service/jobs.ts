import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { listAttempts, type AttemptRecord } from '../db/attempts';
import {
  findOwnedJob,
  insertJobOrFindExisting,
  listOwnedJobs,
  type JobPageCursor,
  type JobRecord,
} from '../db/jobs';
import type { Pool } from '../db/pool';
import { requestFingerprint } from '../domain/fingerprint';
import { isTerminalJobStatus, type JobMode, type JobStatus } from '../domain/job';
import { jobWorkflowId } from '../domain/workflowId';
import { findJobType, jobTypeNames } from '../jobTypes';
import type { ProviderRegistry } from '../providers/registry';
import {
  AttemptCount,
  JobOwner,
  JobStatusAttribute,
  JobType,
  type JobWorkflowInput,
} from '../workflows/definitions';
import type { jobWorkflow } from '../workflows';
import { IdempotencyKeyReuseError, ServiceError } from './errors';

export interface JobServiceDeps {
  pool: Pool;
  temporal: Client;
  taskQueue: string;
  providers: ProviderRegistry;
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

/** Checks an intent against the job type and the providers, and resolves its plan and mode. */
export function validateIntent(
  deps: Pick<JobServiceDeps, 'providers'>,
  request: Omit<CreateJobRequest, 'ownerId' | 'idempotencyKey'>,
) {
  const contract = findJobType(request.type);
  if (!contract) {
    throw new ServiceError('unknown-job-type', `Unknown job type "${request.type}".`, {
      known: jobTypeNames(),
    });
  }
  const parsed = contract.input.safeParse(request.input);
  if (!parsed.success) {
    throw new ServiceError(
      'invalid-input',
      `The input is not valid for job type "${request.type}".`,
      {
        errors: parsed.error.issues.map((issue: z.core.$ZodIssue) => ({
          path: ['input', ...issue.path.map(String)].join('.'),
          message: issue.message,
        })),
      },
    );
  }
  if (request.mode === 'hedged' && contract.sideEffects) {
    throw new ServiceError(
      'hedging-not-allowed',
      `"${request.type}" jobs have side effects, so they always run one attempt at a time.`,
      {
        jobTypeHasSideEffects: true,
      },
    );
  }
  const unknownProviders = (request.providers ?? []).filter((name) => !deps.providers.has(name));
  if (unknownProviders.length > 0) {
    throw new ServiceError(
      'unknown-provider',
      `Unknown provider(s): ${unknownProviders.join(', ')}.`,
      {
        known: deps.providers.names(),
      },
    );
  }
  const compatible = deps.providers.compatible(contract.providerKinds);
  const incompatible = (request.providers ?? []).filter((name) => !compatible.includes(name));
  if (incompatible.length > 0) {
    throw new ServiceError(
      'incompatible-provider',
      `Provider(s) ${incompatible.join(', ')} cannot run "${request.type}" jobs.`,
      {
        compatible,
      },
    );
  }
  if (new Set(request.providers ?? []).size !== (request.providers ?? []).length) {
    throw new ServiceError('invalid-input', 'A provider may appear in the plan only once.', {
      errors: [{ path: 'providers', message: 'duplicate provider' }],
    });
  }
  const plan = request.providers ?? compatible;
  if (plan.length === 0) {
    throw new ServiceError(
      'unknown-provider',
      `No configured provider can run "${request.type}" jobs.`,
      { known: deps.providers.names() },
    );
  }
  const mode = request.mode ?? 'exclusive';
  if (mode === 'hedged') {
    const withEffects = plan.filter((name) => deps.providers.get(name).config.sideEffects);
    if (contract.sideEffects || withEffects.length > 0 || plan.length < 2) {
      throw new ServiceError(
        'hedging-not-allowed',
        'Hedged mode runs attempts side by side, so it needs at least two providers and is only allowed when the job type and every provider are free of side effects.',
        { jobTypeHasSideEffects: contract.sideEffects, providersWithSideEffects: withEffects },
      );
    }
  }
  return { input: request.input, plan, mode };
}

/**
 * Makes sure the job's workflow exists. Safe to call any number of times: a running workflow
 * is reused, a closed one is never started again.
 */
export async function ensureJobWorkflow(
  deps: Pick<JobServiceDeps, 'temporal' | 'taskQueue'>,
  job: JobRecord,
): Promise<void> {
  const args: JobWorkflowInput = {
    jobId: job.id,
    ownerId: job.ownerId,
    idempotencyKey: job.idempotencyKey,
    requestFingerprint: job.requestFingerprint,
  };
  try {
    await deps.temporal.workflow.start<typeof jobWorkflow>('jobWorkflow', {
      workflowId: job.workflowId,
      taskQueue: deps.taskQueue,
      args: [args],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      staticSummary: `${job.type} job ${job.id} for ${job.ownerId} (key ${job.idempotencyKey})`,
      staticDetails: [
        `**job** ${job.id}`,
        `**owner** ${job.ownerId}`,
        `**idempotency key** \`${job.idempotencyKey}\``,
        `**providers: ${job.providers.join(', ')}** (${job.mode})`,
        `**fingerprint** ${job.requestFingerprint.slice(0, 16)}…`,
      ].join('  \n'),
      typedSearchAttributes: [
        { key: JobOwner, value: job.ownerId },
        { key: JobType, value: job.type },
        { key: JobStatusAttribute, value: job.status },
        { key: AttemptCount, value: job.attemptCount },
      ],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
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
  const { input, plan, mode } = validateIntent(deps, request);
  const fingerprint = requestFingerprint({
    type: request.type,
    input,
    providers: request.providers ?? null,
    mode,
  });
  const { job, created } = await insertJobOrFindExisting(deps.pool, {
    ownerId: request.ownerId,
    idempotencyKey: request.idempotencyKey,
    requestFingerprint: fingerprint,
    intent: { type: request.type, input, providers: plan, mode },
    workflowId: jobWorkflowId(request.ownerId, request.idempotencyKey),
  });
  if (!created && job.requestFingerprint !== fingerprint) throw new IdempotencyKeyReuseError(job);
  // Also on a replay whose workflow never ran: if we crashed between the insert and the start,
  // the retry heals it. Once the workflow has admitted the job it exists, and a replay is
  // answered from the database alone.
  if (created || !job.admittedAt) await ensureJobWorkflow(deps, job);
  return { job, created };
}

/**
 * A job of this owner (another owner's job does not exist for them), with its attempts.
 * With `waitMs`, holds on until the job is terminal or the wait ends.
 */
export async function getJob(
  deps: Pick<JobServiceDeps, 'pool'>,
  ownerId: string,
  jobId: string,
  options: { waitMs?: number } = {},
): Promise<JobWithAttempts | undefined> {
  if (!z.uuid().safeParse(jobId).success) return undefined;
  const deadline = Date.now() + (options.waitMs ?? 0);
  // Poll quickly at first (most jobs finish fast), then back off to spare the database.
  let pollMs = 50;
  for (;;) {
    const job = await findOwnedJob(deps.pool, ownerId, jobId);
    if (!job) return undefined;
    if (isTerminalJobStatus(job.status) || Date.now() >= deadline) {
      return { job, attempts: await listAttempts(deps.pool, job.id) };
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(pollMs, Math.max(0, deadline - Date.now()))),
    );
    pollMs = Math.min(pollMs * 2, 1_000);
  }
}

export async function listJobs(
  deps: Pick<JobServiceDeps, 'pool'>,
  ownerId: string,
  options: { status?: JobStatus; after?: JobPageCursor; limit: number },
): Promise<{ jobs: JobRecord[]; next?: JobPageCursor }> {
  return listOwnedJobs(deps.pool, ownerId, options);
}
