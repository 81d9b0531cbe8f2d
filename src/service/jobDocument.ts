import { z } from 'zod';
import type { AttemptRecord } from '../db/attempts';
import type { JobPageCursor } from '../db/jobLists';
import type { JobRecord } from '../db/jobs';
import { CALL_OUTCOMES, jobCost } from '../domain/cost';
import { isUuid } from '../domain/identity';
import { ATTEMPT_STATES, JOB_MODES, JOB_STATUSES } from '../domain/job';

const tokenUsageSchema = z.object({
  inputTokens: z.number().int().optional(),
  cachedInputTokens: z.number().int().optional(),
  outputTokens: z.number().int().optional(),
});

const moneySchema = z.object({ amount: z.number(), currency: z.string() });

export const attemptResourceSchema = z.object({
  id: z.string(),
  seq: z.number().int(),
  provider: z.string(),
  state: z.enum(ATTEMPT_STATES),
  error: z.unknown(),
  rawOutput: z.unknown(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  /** What the call came to, once it has ended. */
  // null among the values: OpenAPI 3.0's `nullable` does not widen an enum.
  callOutcome: z.literal([...CALL_OUTCOMES, null]),
  /** Tokens the provider reported for the call; null when it reported none. */
  usage: tokenUsageSchema.nullable(),
  /** What the call cost; null while unknown (no usage reported, no price, or not ended). */
  cost: moneySchema.nullable(),
});

export const jobCostSchema = z.object({
  amounts: z.array(
    z.object({
      currency: z.string(),
      total: z.number(),
      winner: z.number().nullable(),
      others: z.number(),
    }),
  ),
  unknownCalls: z.number().int(),
  tokens: tokenUsageSchema,
});

export const jobResourceSchema = z.object({
  id: z.uuid(),
  status: z.enum(JOB_STATUSES),
  type: z.string(),
  input: z.record(z.string(), z.unknown()),
  providers: z.array(z.string()),
  mode: z.enum(JOB_MODES),
  idempotencyKey: z.string(),
  workflowId: z.string(),
  result: z.unknown(),
  completedBy: z.string().nullable(),
  failure: z.unknown(),
  notes: z.array(z.unknown()),
  attemptCount: z.number().int(),
  attempts: z.array(attemptResourceSchema).optional(),
  /** What the job's calls cost, the winner's apart from the rest; given with the attempts. */
  cost: jobCostSchema.optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
  /** 1 for a key's first job; each job made after an operator released the key counts up. */
  keyGeneration: z.number().int(),
  /** Who released this job's key, why and when; null while the key is this job's. */
  keyRelease: z.object({ operator: z.string(), reason: z.string(), at: z.string() }).nullable(),
  /** The job of the key's previous generation, which this one replaced. */
  supersedes: z.string().nullable(),
  /** The job made with this job's key after it was released. */
  supersededBy: z.string().nullable(),
});

export type JobResource = z.infer<typeof jobResourceSchema>;

/** What a list item may carry besides the job's summary (`?include=`). */
export const LIST_INCLUSIONS = ['input', 'result'] as const;
export type ListInclusion = (typeof LIST_INCLUSIONS)[number];

/** A job in a list: without its input and result unless the request asked for them. */
export const jobListItemSchema = jobResourceSchema.extend({
  input: jobResourceSchema.shape.input.optional(),
  result: z.unknown().optional(),
});

export const jobPageSchema = z.object({
  jobs: z.array(jobListItemSchema),
  nextCursor: z.string().nullable(),
});

export type JobListItem = z.infer<typeof jobListItemSchema>;

/** The job as a list shows it: `include` names what it carries of its input and result. */
export function jobListItem(job: JobRecord, include: ReadonlySet<ListInclusion>): JobListItem {
  const { input, result, ...summary } = jobResource(job);
  return {
    ...summary,
    ...(include.has('input') ? { input } : {}),
    ...(include.has('result') ? { result } : {}),
  };
}

/**
 * A job's note as its owner sees it: a note's `service` part holds what the service measured
 * over every owner's jobs (hedging's spend, say), which only operators see.
 */
function ownerView(note: unknown): unknown {
  if (note === null || typeof note !== 'object' || !('service' in note)) return note;
  const { service: _service, ...rest } = note as Record<string, unknown>;
  return rest;
}

/**
 * The job as clients see it; `operator` adds what only operators may read (notes' service-wide
 * figures). Raw provider output of losing attempts never appears here.
 */
export function jobResource(
  job: JobRecord,
  attempts?: AttemptRecord[],
  audience: 'owner' | 'operator' = 'owner',
): JobResource {
  return {
    id: job.id,
    status: job.status,
    type: job.type,
    input: job.input,
    providers: job.providers,
    mode: job.mode,
    idempotencyKey: job.idempotencyKey,
    workflowId: job.workflowId,
    result: job.result ?? null,
    completedBy: job.completedBy,
    failure: job.failure ?? null,
    notes: audience === 'operator' ? job.notes : job.notes.map(ownerView),
    attemptCount: attempts?.length ?? job.attemptCount,
    ...(attempts && {
      attempts: attempts.map((attempt) => ({
        id: attempt.id,
        seq: attempt.seq,
        provider: attempt.provider,
        state: attempt.state,
        error: attempt.error ?? null,
        rawOutput: attempt.rawOutput ?? null,
        startedAt: attempt.startedAt?.toISOString() ?? null,
        finishedAt: attempt.finishedAt?.toISOString() ?? null,
        callOutcome: attempt.callOutcome,
        usage: attempt.usage,
        cost: attempt.cost,
      })),
      cost: jobCost(attempts, job.completedBy),
    }),
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    finishedAt: job.finishedAt?.toISOString() ?? null,
    keyGeneration: job.keyGeneration,
    keyRelease: job.keyRelease,
    supersedes: job.supersedes,
    supersededBy: job.supersededBy,
  };
}

/** Opaque page cursors: the (creation time, id) of the last job on the page. */
export function encodeCursor(cursor: JobPageCursor): string {
  return Buffer.from(`${cursor.createdAtMicros}.${cursor.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(text: string): JobPageCursor | undefined {
  const match = /^(\d{1,17})\.([0-9a-f-]{36})$/.exec(
    Buffer.from(text, 'base64url').toString('utf8'),
  );
  if (!match || !isUuid(match[2]!)) return undefined;
  const createdAtMicros = Number(match[1]);
  // A time a JavaScript number cannot hold exactly (after the year 2255) is no cursor we issued.
  if (!Number.isSafeInteger(createdAtMicros)) return undefined;
  return { createdAtMicros, id: match[2]! };
}
