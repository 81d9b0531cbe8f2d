/** GET /jobs: an owner's jobs, newest first, a page at a time (bodies too, when asked). */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { JOB_STATUSES } from '../../domain/job';
import {
  decodeCursor,
  encodeCursor,
  jobListItem,
  jobPageSchema,
  LIST_INCLUSIONS,
  type ListInclusion,
} from '../../service/jobDocument';
import { listJobs } from '../../service/jobs';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { problemResponses } from '../openapi';
import { sendProblem } from '../problems';

/** `{"jobs":[],"nextCursor":"…"}` around the items: generously, a cursor is under 100 bytes. */
const PAGE_OVERHEAD_BYTES = 200;
const INCLUDE_PATTERN = /^(input|result)(,(input|result))?$/;

/** Lists an owner's jobs (under jobRoutes, which authenticates it). */
export const jobListRoute: FastifyPluginAsyncZod<{
  deps: Pick<ApiDeps, 'pool' | 'listPageMaxBytes'>;
}> = async (app, { deps }) => {
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
};
