import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { JobEndings } from '../../db/jobEndings';
import { MAX_WAIT_SECONDS } from '../../domain/httpBounds';
import { IDEMPOTENCY_KEY_RULE, isValidIdempotencyKey } from '../../domain/identity';
import { JOB_MODES, JOB_STATUSES } from '../../domain/job';
import { cancelJob, requestAttempt } from '../../service/attempts';
import {
  decodeCursor,
  encodeCursor,
  jobListItem,
  jobPageSchema,
  jobResource,
  jobResourceSchema,
  LIST_INCLUSIONS,
  type ListInclusion,
} from '../../service/jobDocument';
import { createJob, getJob, listJobs } from '../../service/jobs';
import type { JobEndMetrics } from '../../telemetry/histograms';
import type { Metrics } from '../../telemetry/metrics';
import { tagRequestJob } from '../../telemetry/requestTracing';
import { authHeaders, requireBearer } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendNotFound, sendProblem } from '../problems';
import { storableText } from '../storable';
import type { WaitLimiter } from '../waitLimiter';

export interface JobRoutesOptions {
  deps: Pick<
    ApiDeps,
    | 'pool'
    | 'temporal'
    | 'taskQueue'
    | 'providers'
    | 'logger'
    | 'tokens'
    | 'waitPollMs'
    | 'ownerLimits'
    | 'listPageMaxBytes'
    | 'webhookRetry'
  >;
  /** With the metrics that observe a job its owner's cancel ends. */
  metrics: Pick<Metrics, 'jobsCreated' | 'jobsReplayed'> & JobEndMetrics;
  waits: WaitLimiter;
  endings: JobEndings;
}
/** `{"jobs":[],"nextCursor":"…"}` around the items: generously, a cursor is under 100 bytes. */
const PAGE_OVERHEAD_BYTES = 200;
const INCLUDE_PATTERN = /^(input|result)(,(input|result))?$/;

const createJobBody = z.strictObject({
  type: z.string().min(1).max(100).describe('Job type, e.g. "summarize".'),
  input: z
    .record(z.string(), z.unknown())
    .describe("The job type's input; validated by its schema."),
  providers: z
    .array(z.string().min(1).max(63))
    .min(1)
    .max(10)
    .optional()
    .describe('Provider plan: the primary first, then fallbacks. Default: the service default.'),
  mode: z
    .enum(JOB_MODES)
    .optional()
    .describe('exclusive (default) or hedged (side-effect-free jobs only).'),
});

/**
 * A body the caller may leave out. Fastify hands a missing body to the schema as null, so null
 * stands for "none" (a JSON `null` body means the same).
 */
const optionalBody = <T extends z.ZodType>(schema: T) => schema.nullish();

const attemptSummarySchema = z.object({
  attemptId: z.string(),
  seq: z.number().int(),
  provider: z.string(),
  state: z.string(),
});

/** An owner's jobs (under /v1). The owner comes only from the token. */
export const jobRoutes: FastifyPluginAsyncZod<JobRoutesOptions> = async (
  app,
  { deps, metrics, waits, endings },
) => {
  requireBearer(app, deps.tokens, 'token');

  app.post(
    '/jobs',
    {
      schema: {
        summary: 'Create a job, or get the job this Idempotency-Key already made',
        headers: authHeaders.extend({
          'idempotency-key': z
            .string()
            .optional()
            .describe(
              `${IDEMPOTENCY_KEY_RULE}, chosen by the client per intent. Keys are kept for ever: the same key always answers with its job, unless an operator released the key of an ended job (recorded on it), after which the key makes a new job.`,
            ),
        }),
        body: createJobBody,
        response: {
          201: jobResourceSchema,
          200: jobResourceSchema,
          ...problemResponses(401, 409, 429, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      if (key === undefined) {
        return sendProblem(
          reply,
          'idempotency-key-missing',
          'Send an Idempotency-Key header that identifies this intent.',
        );
      }
      if (!isValidIdempotencyKey(key)) {
        return sendProblem(
          reply,
          'idempotency-key-invalid',
          `The Idempotency-Key must be ${IDEMPOTENCY_KEY_RULE}.`,
        );
      }
      const { job, created } = await createJob(deps, {
        ownerId: request.ownerId,
        idempotencyKey: key,
        ...request.body,
      });
      tagRequestJob(job.id);
      (created ? metrics.jobsCreated : metrics.jobsReplayed).inc({ type: job.type });
      reply.header('location', `/v1/jobs/${job.id}`);
      if (!created) reply.header('idempotent-replayed', 'true');
      return reply.code(created ? 201 : 200).send(jobResource(job));
    },
  );

  app.get(
    '/jobs/:id',
    {
      schema: {
        summary: 'Get a job; with ?wait=<seconds>, wait until it is terminal',
        headers: authHeaders,
        params: z.object({ id: z.string() }),
        querystring: z.object({
          wait: z.coerce.number().min(0).max(MAX_WAIT_SECONDS).optional(),
        }),
        response: { 200: jobResourceSchema, ...problemResponses(401, 404, 429) },
      },
    },
    async (request, reply) => {
      const waitMs = (request.query.wait ?? 0) * 1000;
      if (waitMs === 0) {
        const found = await getJob(deps, request.ownerId, request.params.id);
        if (!found) return sendNotFound(reply, `job ${request.params.id}`);
        return jobResource(found.job, found.attempts);
      }
      const release = waits.enter(request.ownerId);
      if (!release) {
        return sendProblem(
          reply,
          'too-many-waits',
          `At most ${waits.limit} requests may wait on jobs at once; poll without ?wait= or retry shortly.`,
          {},
          { 'retry-after': '1' },
        );
      }
      // The wait ends when the client goes away: an abandoned wait costs nothing more.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      try {
        const found = await getJob(deps, request.ownerId, request.params.id, {
          waitMs,
          signal: gone.signal,
          endings,
          pollMs: deps.waitPollMs,
        });
        if (gone.signal.aborted) return reply;
        if (!found) return sendNotFound(reply, `job ${request.params.id}`);
        return jobResource(found.job, found.attempts);
      } finally {
        release();
      }
    },
  );

  app.get(
    '/jobs',
    {
      schema: {
        summary: "List the caller's jobs, newest first",
        headers: authHeaders,
        querystring: z.object({
          status: z.enum(JOB_STATUSES).optional(),
          limit: z.coerce.number().int().min(1).max(100).default(20),
          cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
          include: z
            .string()
            .regex(INCLUDE_PATTERN)
            .optional()
            .describe(
              'input, result or input,result: list items carry these only when asked, and such a page stops before its byte bound (ONEJOB_LIST_PAGE_MAX_BYTES), with nextCursor where it stopped.',
            ),
        }),
        response: { 200: jobPageSchema, ...problemResponses(401) },
      },
    },
    async (request, reply) => {
      const { status, limit, cursor } = request.query;
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      if (cursor !== undefined && !after)
        return sendProblem(reply, 'invalid-cursor', 'Use nextCursor from a previous page.');
      const include = new Set(
        (request.query.include?.split(',') ?? []).filter((name): name is ListInclusion =>
          (LIST_INCLUSIONS as readonly string[]).includes(name),
        ),
      );
      const listPageMaxBytes = deps.listPageMaxBytes;
      const page = await listJobs(deps, request.ownerId, {
        status,
        limit,
        after,
        withBodies: include.size > 0,
        ...(include.size > 0 ? { maxStoredBytes: listPageMaxBytes } : {}),
      });
      const items = page.jobs.map((job) => jobListItem(job, include));
      if (include.size === 0)
        return { jobs: items, nextCursor: page.next ? encodeCursor(page.next) : null };
      // Inputs and results may be large: the page stops before its byte bound (always holding
      // one job, so that paging moves on), and the next page starts after its last job.
      let bytes = PAGE_OVERHEAD_BYTES;
      let kept = 0;
      for (const item of items) {
        const itemBytes = Buffer.byteLength(JSON.stringify(item)) + 1;
        if (kept > 0 && bytes + itemBytes > listPageMaxBytes) break;
        bytes += itemBytes;
        kept += 1;
      }
      const last = page.jobs[kept - 1];
      const next =
        kept < items.length && last
          ? { createdAtMicros: last.createdAtMicros, id: last.id }
          : page.next;
      return { jobs: items.slice(0, kept), nextCursor: next ? encodeCursor(next) : null };
    },
  );

  app.post(
    '/jobs/:id/attempts',
    {
      schema: {
        summary: 'Try again, or use the fallback: a new attempt under the same job',
        headers: authHeaders,
        params: z.object({ id: z.string() }),
        body: optionalBody(z.strictObject({ provider: z.string().min(1).max(63).optional() })),
        response: {
          202: attemptSummarySchema,
          ...problemResponses(401, 404, 409, 422, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const attempt = await requestAttempt(
        deps,
        request.ownerId,
        request.params.id,
        request.body?.provider,
      );
      if (!attempt) return sendNotFound(reply, `job ${request.params.id}`);
      tagRequestJob(request.params.id);
      return reply.code(202).header('location', `/v1/jobs/${request.params.id}`).send(attempt);
    },
  );

  app.post(
    '/jobs/:id/cancel',
    {
      schema: {
        summary:
          'Cancel your job: a running attempt is abandoned (its outcome still reconciled); a result already recorded stands (409, with the status it ended in)',
        headers: authHeaders,
        params: z.object({ id: z.string() }),
        body: optionalBody(
          z.strictObject({
            reason: storableText(z.string().min(1).max(2000))
              .optional()
              .describe('Why, as recorded with the job. Default: "cancelled by its owner".'),
          }),
        ),
        response: { 200: jobResourceSchema, ...problemResponses(401, 404, 409, ...BODY_ERRORS) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const cancelled = await cancelJob({ ...deps, metrics }, id, {
        owner: request.ownerId,
        reason: request.body?.reason ?? 'cancelled by its owner',
      });
      const found = cancelled && (await getJob(deps, request.ownerId, id));
      if (!found) return sendNotFound(reply, `job ${id}`);
      tagRequestJob(found.job.id);
      return jobResource(found.job, found.attempts);
    },
  );
};
