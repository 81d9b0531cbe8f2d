import { BROKE_OWNER, CEILING_OWNER } from './budgets';
import type { Actors } from './operations';
import type { Intent } from './world';

/**
 * The opening's money step: one job for each money rule the campaign sets, so each rule is met
 * whatever the traffic draws (how many jobs a time-bounded campaign makes, and whose, depends on
 * the machine). The ceiling owner's summary names the dear backup as its fallback, which its
 * admission must skip with a note of what was avoided (and never call); the broke owner's charge
 * is accepted (something is left) but its first attempt cannot reserve its worst case, so the job
 * fails `budget-exceeded` with nothing sent. Both are waited for until they end.
 *
 * Returns the next operation number.
 */
export async function openingMoney(
  actors: Actors,
  untilEnded: (jobId: string) => Promise<void>,
  op: number,
): Promise<number> {
  const { client, world, journal } = actors;
  const jobs: [owner: string, label: string, intent: Intent][] = [
    [
      CEILING_OWNER,
      'dear-fallback-kept-out',
      {
        type: 'summarize',
        input: { text: 'The opening summary whose fallback costs past its ceiling.' },
        providers: ['simulator', 'simulator-backup'],
        mode: 'exclusive',
      },
    ],
    [
      BROKE_OWNER,
      'no-room-for-one-call',
      {
        type: 'charge',
        input: { amountCents: 1_000 + op, currency: 'EUR', account: `acct-opening-${op}-broke` },
        providers: ['simulator-pay'],
        mode: 'exclusive',
      },
    ],
  ];
  await Promise.all(
    jobs.map(async ([owner, label, intent], index) => {
      const at = op + index;
      const record = world.remember(owner, `chaos-opening-${at}-${label}`, intent);
      journal.operation(at, 'create', { owner, key: record.key, intent, opening: true });
      await client.create(at, 'create', record, { token: actors.owners[owner]!, via: 'lb' });
      const [jobId] = record.jobIds;
      if (jobId) await untilEnded(jobId);
    }),
  );
  return op + jobs.length;
}
