import type {
  ConnectionError,
  FastifyBaseLogger,
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RawServerDefault,
} from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ServiceError } from '../service/errors';
import type { Metrics } from '../telemetry/metrics';
import { answerAndCloseLingering } from './lingeringClose';
import { rawProblemResponse, sendNotFound, sendProblem } from './problems';
import type { DiscardBounds } from './refusedBodies';
import { isDependencyUnavailable } from './unavailable';

/**
 * Requests Node's parser refuses (a NUL or control character in a header, a header without a
 * name, headers too large) still get a problem, and a body still arriving after it is read and
 * thrown away within the bounds, so that a reset does not destroy the answer.
 */
export function clientErrorHandler(bounds: DiscardBounds) {
  // Node reports the parse error again for each chunk that arrives after it.
  const answered = new WeakSet<Socket>();
  return (error: ConnectionError, socket: Socket): void => {
    if (answered.has(socket)) return;
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      // An answer already begun (a refusal whose body is still coming) must not be corrupted.
      const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })
        ._httpMessage?.headersSent;
      if (answering) socket.destroy();
      // Destroyed once written: a client still trickling bytes must not keep the socket.
      else
        socket.end(
          rawProblemResponse(
            'request-timeout',
            'The request did not arrive in time: send its headers and body without pausing.',
          ),
          () => socket.destroy(),
        );
      return;
    }
    answered.add(socket);
    answerAndCloseLingering(
      socket,
      error.code === 'HPE_HEADER_OVERFLOW'
        ? rawProblemResponse('headers-too-large', 'The request headers exceed the server limit.')
        : rawProblemResponse(
            'malformed-request',
            'The request could not be parsed. Header names must be tokens, and header values (Idempotency-Key included) may not contain NUL or other control characters.',
          ),
      bounds,
    );
  };
}

/**
 * Errors Fastify's router meets before any route or hook runs: a path whose percent-encoding
 * does not decode, a path parameter longer than the router takes. Without this hook Fastify
 * answers them with its own plain JSON.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void sendProblem(reply, 'uri-too-long', 'A path segment is longer than any id the API uses.');
    return;
  }
  void sendProblem(
    reply,
    'malformed-request',
    'The URL could not be decoded: each % must start a valid percent-encoded UTF-8 sequence.',
  );
}

/**
 * Every error a route or Fastify throws becomes a problem document; unknown routes too. Generic
 * over the logger: the app logs with pino, which is more than Fastify's base logger.
 */
export function setErrorHandlers<Logger extends FastifyBaseLogger>(
  app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger>,
  metrics: Pick<Metrics, 'conflicts'>,
): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      return sendProblem(reply, 'validation-error', 'Some fields are missing or invalid.', {
        errors: error.validation.map((issue) => ({
          path: [error.validationContext, ...issue.instancePath.split('/').filter(Boolean)].join(
            '.',
          ),
          message: issue.message,
        })),
      });
    }
    if (error instanceof ServiceError) {
      const type = error.problemType;
      if (type === 'idempotency-key-reuse') metrics.conflicts.inc();
      // Retry-After and x-should-retry come with the problem type (domain/problems.ts).
      if (type === 'workflow-start-refused') {
        // An operator has to act; say so loudly, and pace the client's retries.
        request.log.error(error.details, 'Temporal refused to start a job workflow');
        // The engine's own words (namespaces, search attributes) are for operators, in the log.
        return sendProblem(
          reply,
          type,
          'The service is temporarily unavailable; the job is recorded and starts once it is back. Retry with the same Idempotency-Key.',
          { jobId: error.details.jobId },
        );
      }
      return sendProblem(reply, type, error.message, error.details);
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendProblem(
          reply,
          'body-too-large',
          `The body exceeds ${app.initialConfig.bodyLimit} bytes.`,
        );
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendProblem(
          reply,
          'unsupported-media-type',
          'Only application/json bodies are accepted.',
        );
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return sendProblem(reply, 'malformed-body', error.message);
    }
    if (error instanceof SyntaxError) return sendProblem(reply, 'malformed-body', error.message);
    // A path the docs' static files refuse (one that climbs out of their folder) names nothing.
    if (error.code === 'FST_STATIC_FORBIDDEN_PATH')
      return sendNotFound(reply, `file ${request.url}`);
    // Any other request Fastify itself refuses (a bad Content-Length, say) is the client's error.
    if (error.code?.startsWith('FST_ERR_') && (error.statusCode ?? 500) < 500)
      return sendProblem(reply, 'malformed-request', error.message);
    if (isDependencyUnavailable(error)) {
      request.log.warn({ err: error }, 'a dependency is unavailable');
      return sendProblem(
        reply,
        'service-unavailable',
        'The service is temporarily unavailable; nothing was lost. Retry with the same Idempotency-Key.',
      );
    }
    request.log.error({ err: error }, 'request failed');
    return sendProblem(
      reply,
      'internal',
      'Something went wrong on our side; retrying with the same Idempotency-Key is safe.',
    );
  });

  app.setNotFoundHandler((request, reply) =>
    sendNotFound(reply, `route ${request.method} ${request.url}`),
  );
}
