/** GET /jobs/:id: one of an owner's jobs, now or (with ?wait=) once it has ended. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { JobEndings } from '../../db/jobEndings';
import { MAX_WAIT_SECONDS } from '../../domain/httpBounds';
import { jobResource, jobResourceSchema } from '../../service/jobDocument';
import { getJob } from '../../service/jobs';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { problemResponses } from '../openapi';
import { sendNotFound, sendProblem } from '../problems';
import type { WaitLimiter } from '../waitLimiter';

/** Reads a job, waiting for its end when asked (under jobRoutes, which authenticates it). */
export const jobReadRoute: FastifyPluginAsyncZod<{
  deps: Pick<ApiDeps, 'pool' | 'temporal' | 'waitPollMs'>;
  waits: WaitLimiter;
  endings: JobEndings;
}> = async (app, { deps, waits, endings }) => {
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
};
