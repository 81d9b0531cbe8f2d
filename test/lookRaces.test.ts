import { Client, Connection } from '@temporalio/client';
import { createJobActivities } from '../src/activities';
import { withDefaults } from '../src/config';
import { beginProviderCallOfJob } from '../src/db/attemptCalls';
import { createAttempt, findAttempt } from '../src/db/attempts';
import { endCallWithoutResult, settleAbandonedAttempt } from '../src/db/attemptSettlement';
import { insertJobOrFindExisting } from '../src/db/jobs';
import { requestFingerprint } from '../src/domain/fingerprint';
import { parseSecretKeys } from '../src/domain/secretSealing';
import { jobWorkflowId } from '../src/domain/workflowId';
import { createLogger } from '../src/logger';
import { ProviderRegistry } from '../src/providers/registry';
import type { ReconcileOutcome } from '../src/workflows/definitions';
import { startSimulator, type SimulatorServer } from '../tools/simulator/server';
import { holdStatement } from './support/barriers';
import { createTestDatabase } from './support/database';
import { harness } from './support/harness';
import { TEST_SECRET_KEYS } from './support/identities';
import { payProvider } from './support/providers';

/**
 * A look at an unknown attempt decides on the row as it read it, and asks the provider in
 * between; the row may change before it writes (the call's late end brings a 2xx, another
 * attempt shows the provider files work under ids of its own). Its verdict is written only if
 * what it decided on still holds; otherwise it looks again. The database's guards never see a
 * stale verdict, so no look fails its workflow.
 */
const WINDOW_MS = 300;
const GRACE_MS = 100;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let simulator: SimulatorServer;
let connection: Connection;
let activities: ReturnType<typeof createJobActivities>;

beforeAll(async () => {
  db = await createTestDatabase();
  simulator = await startSimulator();
  const providers = new ProviderRegistry(
    ['pay-late', 'pay-breached'].map((name) =>
      payProvider(simulator.url, name, {
        lateResultTimeoutMs: WINDOW_MS,
        notFoundGraceMs: GRACE_MS,
      }),
    ),
    process.env,
  );
  // The looks never reach Temporal; a client that connects only if used.
  connection = Connection.lazy({ address: harness().temporalAddress });
  activities = createJobActivities({
    ...withDefaults(),
    pool: db.pool,
    providers,
    logger: createLogger('look-races', 'warn'),
    temporal: new Client({ connection }),
    secretKeys: parseSecretKeys(TEST_SECRET_KEYS),
  });
});
afterAll(async () => {
  await connection?.close();
  await simulator?.close();
  await db?.drop();
});

let keys = 0;
/** A charge on `provider` whose attempt 1 was sent and then abandoned by its workflow: unknown. */
async function abandonedCharge(provider: string) {
  const key = `look-race-${++keys}`;
  const intent = {
    type: 'charge',
    input: { amountCents: 100, currency: 'EUR', account: key },
    providers: [provider],
    mode: 'exclusive' as const,
  };
  const { job } = await insertJobOrFindExisting(db.pool, {
    ownerId: 'owner-1',
    idempotencyKey: key,
    requestFingerprint: requestFingerprint(intent),
    intent,
    workflowId: jobWorkflowId('owner-1', key),
  });
  const { id } = await createAttempt(db.pool, { jobId: job.id, seq: 1, provider, exclusive: true });
  const { token } = await beginProviderCallOfJob(db.pool, id, {
    [provider]: { lateResultMs: WINDOW_MS, graceMs: GRACE_MS },
  });
  await settleAbandonedAttempt(db.pool, id, { code: 'timeout', message: 'the workflow gave up' });
  return { attemptId: id, token: token! };
}

/**
 * Looks at the attempt until one look's `failed` is caught before it is written, and returns
 * that look (still running): "no record", said twice the grace apart, once the call is over.
 */
async function lookCaughtFailingIt(attemptId: string) {
  const write = holdStatement('attempts.fail-on-evidence', (values) => values[0] === attemptId);
  for (;;) {
    const look = activities.reconcileAttempt({ attemptId });
    const first = await Promise.race([
      look.then((outcome) => ({ outcome })),
      write.reached.then(() => 'caught' as const),
    ]);
    if (first === 'caught') return { look, write };
    expect(first.outcome.state).toBe('unknown');
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(first.outcome.recheckInMs ?? 50, 50)),
    );
  }
}

async function outcomeOf(look: Promise<ReconcileOutcome>) {
  try {
    return await look;
  } catch (error) {
    return { threw: (error as Error).message };
  }
}

test('a look whose "no record" verdict meets the call\'s late 2xx looks again: the attempt needs an operator, and the look does not fail', async () => {
  const { attemptId, token } = await abandonedCharge('pay-late');
  const { look, write } = await lookCaughtFailingIt(attemptId);
  try {
    // The call's own end arrives now, late, with a 2xx whose body could not be read.
    await endCallWithoutResult(
      db.pool,
      attemptId,
      token,
      { outcome: 'failed' },
      {
        state: 'unknown',
        error: { code: 'unreadable', message: 'a 2xx cut off mid-body' },
        successAnswered: true,
      },
    );
  } finally {
    write.restore();
  }
  expect(await outcomeOf(look)).toMatchObject({ state: 'unknown', needsOperator: true });
  expect(await findAttempt(db.pool, attemptId)).toMatchObject({ state: 'unknown' });
});

test('a look whose "no record" verdict meets proof that the provider files work under ids of its own looks again: the attempt needs an operator, and the look does not fail', async () => {
  const { attemptId } = await abandonedCharge('pay-breached');
  const { look, write } = await lookCaughtFailingIt(attemptId);
  try {
    // Another charge on the same provider answers a 2xx that is not the charge asked for.
    const other = await abandonedCharge('pay-breached');
    await endCallWithoutResult(
      db.pool,
      other.attemptId,
      other.token,
      { outcome: 'rejected' },
      {
        state: 'unknown',
        error: { code: 'contract_violation_after_effect', message: 'status "pending"' },
        successAnswered: true,
      },
    );
  } finally {
    write.restore();
  }
  expect(await outcomeOf(look)).toMatchObject({ state: 'unknown', needsOperator: true });
  expect(await findAttempt(db.pool, attemptId)).toMatchObject({ state: 'unknown' });
});
