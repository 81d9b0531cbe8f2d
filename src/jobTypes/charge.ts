import { z } from 'zod';
import { CURRENCY_CODE } from '../domain/cost';
import type { JobTypeContract } from './contract';

const input = z.strictObject({
  amountCents: z.number().int().positive().max(100_000_000),
  currency: z.string().regex(CURRENCY_CODE, 'currency is an ISO 4217 code such as EUR'),
  account: z.string().min(1).max(200),
});

const output = z.strictObject({
  id: z.string().min(1),
  status: z.literal('succeeded'),
  amountCents: z.number().int(),
  currency: z.string(),
  account: z.string(),
  idempotencyKey: z.string(),
});

/** Moves money: a side effect, so always exclusive and never hedged. */
export const charge: JobTypeContract<z.infer<typeof input>, z.infer<typeof output>> = {
  name: 'charge',
  revision: 1,
  sample: { amountCents: 1250, currency: 'EUR', account: 'acct-sample' },
  input,
  output,
  sideEffects: true,
  providerKinds: ['http'],
  prompt: () => {
    throw new Error('charge jobs are not sent to chat providers');
  },
  // The provider must echo exactly what we asked, under exactly our key.
  check: (request, result, { attemptId }) => {
    if (result.amountCents !== request.amountCents)
      return `amount ${result.amountCents} is not ${request.amountCents}`;
    if (result.currency !== request.currency)
      return `currency ${result.currency} is not ${request.currency}`;
    if (result.account !== request.account) return 'account differs from the request';
    if (result.idempotencyKey !== attemptId)
      return `idempotency key ${result.idempotencyKey} is not ${attemptId}`;
    return undefined;
  },
  // The charge as the provider's export shows it; a report without an account column is taken
  // to name the account charged (the key is ours, and unique to this charge).
  resultFromReport: (request, reported, attemptId) => ({
    id: reported.providerId,
    status: 'succeeded',
    amountCents: reported.amountMinor,
    currency: reported.currency,
    account: reported.account ?? request.account,
    idempotencyKey: attemptId,
  }),
};
