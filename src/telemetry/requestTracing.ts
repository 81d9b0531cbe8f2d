import { trace } from '@opentelemetry/api';
import type { FastifyReply } from 'fastify';

/**
 * The HTTP server span of a traced request (none when tracing is off) takes its route's name,
 * `POST /v1/jobs`, never a path with ids in it, and its trace is answered in `traceresponse`
 * (W3C Trace Context Level 2: version, trace id, this span's id, flags), so a caller that sent
 * no traceparent still learns which trace its request is.
 */
export function nameRequestSpan(
  method: string,
  route: string | undefined,
  reply: FastifyReply,
): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (route) {
    span.updateName(`${method} ${route}`);
    span.setAttribute('http.route', route);
  }
  reply.header('traceresponse', `00-${traceId}-${spanId}-0${traceFlags & 1}`);
}

/**
 * Tags the request's server span with the job it created or acted on (`onejob.job_id`), so that
 * a search for the job finds the request (`onejob jobs trace`), its create above all, even
 * before the worker has traced anything. Reads are not tagged: a client polling a job would bury
 * its few traces under its own. A no-op when tracing is off.
 */
export function tagRequestJob(jobId: string): void {
  trace.getActiveSpan()?.setAttribute('onejob.job_id', jobId);
}
