/** POST …/webhooks/:id/redeliver: events sent again to an endpoint, by its owner or an operator. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RedeliverySelection } from '../../db/webhookRedeliveries';
import { senderDeps } from '../../service/attempts';
import { MAX_REDELIVERIES, redeliverWebhooks } from '../../service/webhookRedelivery';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendNotFound, sendProblem } from '../problems';
import { storableText } from '../storable';

const redeliveryBody = z.strictObject({
  deliveryId: z
    .string()
    .max(100)
    .optional()
    .describe('Send this delivery’s event again, whatever became of it (unless one waits).'),
  failedSince: z.iso
    .datetime({ offset: true })
    .optional()
    .describe(
      `Send again every event whose delivery to the endpoint ended undelivered (failed, or abandoned while it was disabled) since this time, not those delivered or waiting since; at most ${MAX_REDELIVERIES} per request.`,
    ),
  reason: storableText(z.string().min(1).max(1000))
    .optional()
    .describe('Why, kept on each new delivery (required from operators).'),
});

const redeliveryAnswer = z.object({
  redelivered: z.array(
    z.object({
      deliveryId: z.uuid().describe('The new delivery, listed with the job’s deliveries.'),
      webhookId: z.uuid().describe('Sent as webhook-id: the first delivery’s, as before.'),
      jobId: z.uuid(),
    }),
  ),
  more: z
    .boolean()
    .describe(
      'The bound was reached: ask again for what may be left (an ask with none sends none).',
    ),
});

type Deps = Pick<ApiDeps, 'pool' | 'temporal' | 'logger' | 'taskQueue' | 'webhookRetry'>;

/** One route for owners (their own endpoints) and for operators (any endpoint). */
function redeliveryRoute(who: 'owner' | 'operator'): FastifyPluginAsyncZod<{ deps: Deps }> {
  return async (app, { deps }) => {
    app.post(
      '/webhooks/:id/redeliver',
      {
        schema: {
          summary:
            who === 'owner'
              ? 'Send events again to one of your endpoints: one delivery’s event, or every event undelivered since a time; the same webhook-id and bytes as before'
              : "Send events again to any owner's endpoint: one delivery's event, or every event undelivered since a time; the same webhook-id and bytes, recorded with your name and reason",
          headers: authHeaders,
          params: z.object({ id: z.string().max(100) }),
          body: redeliveryBody,
          response: {
            202: redeliveryAnswer,
            ...problemResponses(401, ...(who === 'owner' ? [429] : []), 404, 409, ...BODY_ERRORS),
          },
        },
      },
      async (request, reply) => {
        const { deliveryId, failedSince, reason } = request.body;
        if ((deliveryId === undefined) === (failedSince === undefined))
          return sendProblem(reply, 'validation-error', 'Give either deliveryId or failedSince.');
        if (who === 'operator' && !reason)
          return sendProblem(
            reply,
            'validation-error',
            'reason: say why; it is kept with your name.',
          );
        const selection: RedeliverySelection =
          deliveryId !== undefined ? { deliveryId } : { failedSince: new Date(failedSince!) };
        const answer = await redeliverWebhooks(senderDeps(deps), {
          endpointId: request.params.id,
          ...(who === 'owner' ? { ownerId: request.ownerId } : {}),
          selection,
          by: `${who}:${request.ownerId}`,
          reason: reason ?? '',
        });
        if (!answer)
          return sendNotFound(
            reply,
            deliveryId === undefined
              ? `webhook endpoint ${request.params.id}`
              : `delivery ${deliveryId} to webhook endpoint ${request.params.id}`,
          );
        return reply.code(202).send({
          redelivered: answer.redelivered.map((r) => ({
            deliveryId: r.id,
            webhookId: r.redeliveryOf,
            jobId: r.jobId,
          })),
          more: answer.more,
        });
      },
    );
  };
}

export const ownerRedeliveryRoute = redeliveryRoute('owner');
export const operatorRedeliveryRoute = redeliveryRoute('operator');
