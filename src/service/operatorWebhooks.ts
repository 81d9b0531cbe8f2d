import type { Pool } from '../db/pool';
import {
  actOnEndpoint,
  type OperatorEndpoint,
  type OperatorWebhookAction,
} from '../db/webhookOperator';
import type { Logger } from '../logger';
import { ServiceError } from './errors';

/** The longest reason an operator's action keeps (the database holds the same bound). */
const MAX_REASON_CHARS = 2000;

/**
 * An operator disables, enables or deletes any owner's webhook endpoint, for a reason that is
 * recorded with their name (the API and the CLI both come here). Undefined: no such endpoint.
 */
export async function operatorWebhookAction(
  deps: { pool: Pool; logger: Logger },
  operator: string,
  action: OperatorWebhookAction,
  endpointId: string,
  reason: string,
): Promise<OperatorEndpoint | undefined> {
  if (!/\S/.test(reason) || reason.length > MAX_REASON_CHARS)
    throw new ServiceError(
      'validation-error',
      `reason: say why, in 1 to ${MAX_REASON_CHARS} characters; it is kept with your name`,
    );
  const acted = await actOnEndpoint(deps.pool, { operator, action, endpointId, reason });
  if (acted?.changed)
    deps.logger.info(
      {
        event: `webhook_endpoint_${action}d_by_operator`,
        endpointId,
        ownerId: acted.endpoint.ownerId,
        operator,
        reason,
      },
      `webhook endpoint ${action}d by an operator`,
    );
  return acted?.endpoint;
}
