import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { acceptProviderCallback } from '../../service/providerCallbacks';
import type { JobEndMetrics } from '../../telemetry/histograms';
import { bodyShapeProblem } from '../bodyShape';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, callbackBodySchema, problemResponses } from '../openapi';
import { sendNotFound, sendProblem } from '../problems';
import {
  SIGNATURE_HEADER,
  SIGNATURE_MISMATCH,
  unsignableProblem,
  verifyCallbackSignature,
} from '../signatures';

/**
 * What a provider that takes no callbacks (or none by that name) is answered: what a wrong
 * signature is answered, after the same HMAC under a key of this process's own. The route is
 * unauthenticated, so it must not tell a caller which providers take callbacks.
 */
const NO_SECRET = randomBytes(32).toString('hex');

const refuseSignature = (reply: FastifyReply, reason: string): FastifyReply =>
  sendProblem(
    reply,
    'bad-signature',
    `${reason}. Sign as ${SIGNATURE_HEADER}: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<exact body>" with the provider secret>.`,
  );

export interface CallbackRoutesOptions {
  /** With the metrics that observe a job a callback's result ends. */
  deps: Pick<
    ApiDeps,
    | 'pool'
    | 'temporal'
    | 'logger'
    | 'providers'
    | 'callbackToleranceS'
    | 'taskQueue'
    | 'webhookRetry'
  > & {
    metrics: JobEndMetrics;
  };
}

/**
 * Providers report late outcomes here (under /v1/callbacks), signed with their per-provider
 * secret and a timestamp. The body is kept raw: the signature covers its exact bytes.
 */
export const callbackRoutes: FastifyPluginAsyncZod<CallbackRoutesOptions> = async (
  app,
  { deps },
) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
    done(null, body),
  );

  app.post(
    '/:provider',
    {
      schema: {
        summary:
          'A provider reports the outcome of an attempt (header onejob-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">)',
        // Signed with the provider's secret instead of a bearer token.
        security: [],
        params: z.object({ provider: z.string().max(63) }),
        response: {
          200: z.object({ attemptId: z.string(), state: z.string() }).loose(),
          ...problemResponses(401, 404, 409, ...BODY_ERRORS),
        },
      },
      // What the headers alone condemn is refused before the body is read: an unsigned caller
      // holds neither a socket nor a body's worth of memory. Other media types get their 415.
      preParsing: async (request, reply) => {
        if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) return;
        // A badly formed signature is refused alike for every provider; a well-formed one is
        // checked against the body, so a provider without callbacks is refused only after it,
        // as a wrong signature is.
        const problem = unsignableProblem(request.headers[SIGNATURE_HEADER]);
        if (problem) await refuseSignature(reply, problem);
      },
    },
    async (request, reply) => {
      const provider = request.params.provider;
      const secret = deps.providers.has(provider)
        ? deps.providers.callbackSecret(provider)
        : undefined;
      // No Content-Type and no body leaves no buffer: an empty body, refused below as not JSON.
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const checked = verifyCallbackSignature(
        secret ?? NO_SECRET,
        raw,
        request.headers[SIGNATURE_HEADER],
        { toleranceS: deps.callbackToleranceS },
      );
      const check = secret ? checked : { ok: false as const, reason: SIGNATURE_MISMATCH };
      if (!check.ok) {
        // The operator's log says what the caller is not told.
        if (!secret) request.log.warn({ provider }, 'a callback for a provider that takes none');
        return refuseSignature(reply, check.reason);
      }
      let report: z.infer<typeof callbackBodySchema>;
      try {
        const json: unknown = JSON.parse(raw.toString('utf8'));
        const shape = bodyShapeProblem(json);
        if (shape) return sendProblem(reply, 'malformed-body', shape);
        const parsed = callbackBodySchema.safeParse(json);
        if (!parsed.success)
          return sendProblem(reply, 'validation-error', z.prettifyError(parsed.error));
        report = parsed.data;
      } catch {
        return sendProblem(reply, 'malformed-body', 'The body is not JSON.');
      }
      const accepted = await acceptProviderCallback(
        deps,
        { provider, signedAt: check.signedAt, digest: check.digest },
        report,
      );
      if (!accepted)
        return sendNotFound(reply, `attempt ${report.attemptId} for provider ${provider}`);
      if (accepted.replayed) reply.header('idempotent-replayed', 'true');
      return { ...accepted.outcome };
    },
  );
};
