import type { ProviderConfig } from '../src/providers/provider';
import { runCli } from './support/cli';
import { TEST_TOKEN } from './support/identities';
import {
  createJob,
  succeeded,
  summarizeBody,
  triedOf,
  untilJob,
  type JobView,
} from './support/jobs';
import { eventually } from './support/polling';
import { requestsFor } from './support/providerLedger';
import { anthropicProvider, chatProvider } from './support/providers';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';

/**
 * A provider's bad day, shared by every worker through PostgreSQL: a 429 with Retry-After cools
 * it down for every job, and a circuit breaker opens after failures in a row, lets one probe
 * through after its cool-off, and closes on the probe's answer.
 */
const COOL_OFF_MS = 2_000;
const providers = (url: string): ProviderConfig[] => [
  chatProvider(url, 'chat-cool', 'sim-steady'),
  chatProvider(url, 'chat-backup', 'sim-backup'),
  anthropicProvider(url, 'claude', 'sim-steady', {
    breaker: { consecutiveFailures: 3, minimumCalls: 1_000, coolOffMs: COOL_OFF_MS },
  }),
];
const stack = useTestStack({
  providers,
  certify: [
    ['chat-backup', 'summarize'],
    ['claude', 'summarize'],
  ],
});
afterEach(() => stack.simulator.clearFaults());

interface HealthRow {
  breaker: string;
  opened_at: Date | null;
  cooldown_until: Date | null;
  reason: string | null;
  cooling_ms: number | null;
  cooled_off: boolean;
}
async function health(provider: string): Promise<HealthRow | undefined> {
  const { rows } = await stack.pool.query<HealthRow>(
    `SELECT breaker, opened_at, cooldown_until, reason,
            (extract(epoch FROM cooldown_until - now()) * 1000)::float8 AS cooling_ms,
            coalesce(greatest(opened_at, probe_started_at) + $2 * interval '1 millisecond' <= now(), false) AS cooled_off
       FROM provider_health WHERE provider = $1`,
    [provider, COOL_OFF_MS],
  );
  return rows[0];
}

test('a 429 with Retry-After cools the provider down for every job on every worker: new jobs go to their next provider, and one with nothing else waits for the cooldown instead of failing', async () => {
  // A second API whose jobs run on a second worker (its own task queue), in this process.
  const queue = `${stack.taskQueue}-second`;
  await stack.startWorkerOn(queue);
  const second = await stack.startExtraApi({ ONEJOB_TASK_QUEUE: queue });

  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'rate_limited', retryAfterSeconds: 8 },
  });
  const first = await createJob(stack, summarizeBody(['chat-cool', 'chat-backup']));
  expect(triedOf(await untilJob(stack, first.id, succeeded))).toEqual([
    ['chat-cool', 'failed'],
    ['chat-backup', 'succeeded'],
  ]);
  const cooling = await health('chat-cool');
  expect(cooling?.cooldown_until).not.toBeNull();
  // What follows needs the cooldown still running: it lasts 8 s from the 429.
  expect(cooling!.cooling_ms!).toBeGreaterThan(4_000);

  // On the other worker, a new job passes the provider by, and says so.
  const created = await fetch(`${second.url}/v1/jobs`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TEST_TOKEN}`,
      'content-type': 'application/json',
      'idempotency-key': `cooled-${Date.now()}`,
    },
    body: JSON.stringify(summarizeBody(['chat-cool', 'chat-backup'])),
  });
  expect(created.status).toBe(201);
  const passed = (await created.json()) as JobView;
  const passedDone = await untilJob(stack, passed.id, succeeded);
  expect(triedOf(passedDone)).toEqual([['chat-backup', 'succeeded']]);
  expect(passedDone.notes).toContainEqual(
    expect.objectContaining({ event: 'provider_skipped', provider: 'chat-cool' }),
  );
  expect(requestsFor(stack, passed.id, 'chat').map((r) => r.model)).toEqual(['sim-backup']);

  // A job with no other provider waits for the cooldown on a timer, then runs: it never fails.
  const alone = await createJob(stack, summarizeBody(['chat-cool']));
  const aloneDone = await untilJob(stack, alone.id, succeeded);
  expect(triedOf(aloneDone)).toEqual([['chat-cool', 'succeeded']]);
  const [attempt] = await attemptRows(stack.pool, alone.id);
  expect(attempt!.created_at.getTime()).toBeGreaterThanOrEqual(cooling!.cooldown_until!.getTime());
  await second.stop();
});

test('the breaker opens after failures in a row, new jobs skip the provider, a probe after the cool-off re-opens or closes it, and the CLI shows each state', async () => {
  stack.simulator.inject({ route: 'messages', forMs: 600_000, fault: { kind: 'overloaded' } });
  // Three failures in a row (529, each job falls back): the third opens the breaker.
  for (let i = 0; i < 3; i++) {
    const job = await createJob(stack, summarizeBody(['claude', 'chat-backup']));
    expect(triedOf(await untilJob(stack, job.id, succeeded))).toEqual([
      ['claude', 'failed'],
      ['chat-backup', 'succeeded'],
    ]);
  }
  const opened = await health('claude');
  expect(opened).toMatchObject({ breaker: 'open', reason: '3 failures in a row' });
  // Held open while its open state is examined, however slow the machine: the cool-off counts
  // from opened_at, moved an hour ahead here and put back before the probes.
  const holdOpen = (at: Date | string) =>
    stack.pool.query(`UPDATE provider_health SET opened_at = $1 WHERE provider = 'claude'`, [at]);
  await holdOpen(new Date(opened!.opened_at!.getTime() + 3_600_000));

  // Open: a new job skips it, with a note saying why; nothing is sent to it.
  const skipping = await createJob(stack, summarizeBody(['claude', 'chat-backup']));
  const skipped = await untilJob(stack, skipping.id, succeeded);
  expect(triedOf(skipped)).toEqual([['chat-backup', 'succeeded']]);
  expect(skipped.notes).toContainEqual(
    expect.objectContaining({
      event: 'provider_skipped',
      provider: 'claude',
      reason: 'circuit breaker open: 3 failures in a row',
    }),
  );
  expect(requestsFor(stack, skipping.id, 'messages')).toEqual([]);
  // A user's explicit "try again" on it is refused as such, and sends nothing.
  stack.simulator.inject({ route: 'chat', model: 'sim-backup', times: 1, fault: { kind: 'hang' } });
  const hedged = await createJob(stack, {
    ...summarizeBody(['chat-backup', 'chat-cool']),
    mode: 'hedged',
  });
  await untilJob(stack, hedged.id, (j) => j.attempts[0]?.state === 'running');
  const refused = await stack.request('POST', `/v1/jobs/${hedged.id}/attempts`, {
    body: { provider: 'claude' },
  });
  expect(refused.status).toBe(409);
  expect(await refused.json()).toMatchObject({ type: '/problems/provider-unavailable' });
  expect(refused.headers.get('retry-after')).toBe('5');
  expect(requestsFor(stack, hedged.id, 'messages')).toEqual([]);
  // The opening was logged once, by the call that made it: not again for each job that skips.
  const openings = () =>
    stack
      .serviceLogs()
      .filter((line) => line.event === 'provider_breaker_opened' && line.provider === 'claude');
  expect(openings()).toHaveLength(1);
  const status = await runCli(stack, ['providers', 'status', '--json']);
  expect(JSON.parse(status.stdout)).toContainEqual(
    expect.objectContaining({ provider: 'claude', breaker: 'open', recentFailures: 3 }),
  );

  // After the cool-off one probe goes through; it fails, and the breaker opens again.
  await holdOpen(opened!.opened_at!);
  await eventually(
    () => health('claude'),
    (row) => row?.cooled_off === true,
  );
  const failedProbe = await createJob(stack, summarizeBody(['claude', 'chat-backup']));
  expect(triedOf(await untilJob(stack, failedProbe.id, succeeded))).toEqual([
    ['claude', 'failed'],
    ['chat-backup', 'succeeded'],
  ]);
  const reopened = await health('claude');
  expect(reopened?.breaker).toBe('open');
  expect(reopened!.opened_at!.getTime()).toBeGreaterThan(opened!.opened_at!.getTime());

  // The provider is well again: the next probe is answered and closes the breaker.
  stack.simulator.clearFaults();
  await eventually(
    () => health('claude'),
    (row) => row?.cooled_off === true,
  );
  const probe = await createJob(stack, summarizeBody(['claude', 'chat-backup']));
  expect(triedOf(await untilJob(stack, probe.id, succeeded))).toEqual([['claude', 'succeeded']]);
  // The probe's end is noted after its result is recorded (the job may be seen succeeded first).
  expect(
    await eventually(
      () => health('claude'),
      (row) => row?.breaker !== 'half_open',
    ),
  ).toMatchObject({ breaker: 'closed' });
  const closed = await runCli(stack, ['providers', 'status', '--json']);
  expect(JSON.parse(closed.stdout)).toContainEqual(
    expect.objectContaining({ provider: 'claude', breaker: 'closed' }),
  );
});
