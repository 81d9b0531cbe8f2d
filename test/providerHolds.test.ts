import type { ProviderConfig } from '../src/providers/provider';
import { runCli } from './support/cli';
import {
  chargeBody,
  createJob,
  readJob,
  succeeded,
  summarizeBody,
  triedOf,
  untilJob,
} from './support/jobs';
import { eventually } from './support/polling';
import { providerSaw, requestsFor } from './support/providerLedger';
import { chatProvider, payProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';

/**
 * An operator's hold on a provider (issue 61): a breaker opened by hand, in PostgreSQL, honoured
 * by every worker from the next attempt on, kept with who and why, and lifted only by a release.
 */

// A held job asks again after its provider's breaker cool-off: short here, so a release is seen soon.
const COOL_OFF_MS = 1_000;
const providers = (url: string): ProviderConfig[] => [
  chatProvider(url, 'chat-held', 'sim-steady', { breaker: { coolOffMs: COOL_OFF_MS } }),
  chatProvider(url, 'chat-backup', 'sim-backup'),
  payProvider(url, 'pay-held', {
    timeoutMs: TIMES_OUT_SOON_MS,
    lateResultTimeoutMs: 1_500,
    notFoundGraceMs: 200,
    breaker: { coolOffMs: COOL_OFF_MS },
  }),
];
const stack = useTestStack({ providers, certify: [['chat-backup', 'summarize']] });
afterEach(() => stack.simulator.clearFaults());

const cli = (args: string[]) =>
  runCli(stack, args, { ONEJOB_PROVIDERS: stack.serviceEnv.ONEJOB_PROVIDERS });

async function holdChanges(provider: string) {
  const { rows } = await stack.pool.query<{ change: string; changed_by: string; reason: string }>(
    `SELECT change, changed_by, reason FROM provider_hold_changes WHERE provider = $1 ORDER BY id`,
    [provider],
  );
  return rows;
}

test('a held provider takes no new attempt from any job until released: jobs fail over to their next provider or wait saying why, and each hold and release is kept with who and why', async () => {
  const held = await cli([
    'providers',
    'hold',
    'chat-held',
    '--reason',
    'their status page says degraded',
    '--operator',
    'ops-ann',
  ]);
  expect(held.code).toBe(0);

  // A job with a fallback goes there; its note says the provider is held and why, not by whom.
  const failover = await createJob(stack, summarizeBody(['chat-held', 'chat-backup']));
  const done = await untilJob(stack, failover.id, succeeded);
  expect(triedOf(done)).toEqual([['chat-backup', 'succeeded']]);
  expect(done.notes).toContainEqual(
    expect.objectContaining({
      event: 'provider_skipped',
      provider: 'chat-held',
      held: true,
      reason: expect.stringMatching(
        /^held by an operator since \S+Z: their status page says degraded$/,
      ),
    }),
  );
  expect(JSON.stringify(done.notes)).not.toContain('ops-ann');

  // A job with no other provider waits, and says so once however often it asks again.
  const waiting = await createJob(stack, summarizeBody(['chat-held']));
  await eventually(
    () => readJob(stack, waiting.id),
    (job) => job.notes.some((note) => note.event === 'provider_skipped'),
  );
  // Several cool-offs pass while it is held: it keeps waiting, with no attempt and no request.
  await eventually(
    async () =>
      (
        await stack.pool.query<{ passed: boolean }>(
          `SELECT now() > held_at + $1 * interval '1 millisecond' AS passed
             FROM provider_holds WHERE provider = 'chat-held'`,
          [3 * COOL_OFF_MS],
        )
      ).rows[0]?.passed,
    (passed) => passed === true,
  );
  const stillWaiting = await readJob(stack, waiting.id);
  expect(stillWaiting.status).toBe('pending');
  expect(stillWaiting.attempts).toEqual([]);
  expect(stillWaiting.notes.filter((note) => note.event === 'provider_skipped')).toHaveLength(1);
  expect(requestsFor(stack, waiting.id, 'chat')).toEqual([]);

  // Shown to operators: status (with who), metrics; a second hold is refused with what holds.
  const status = JSON.parse((await cli(['providers', 'status', '--json'])).stdout) as Array<{
    provider: string;
    held: unknown;
  }>;
  expect(status).toContainEqual(
    expect.objectContaining({
      provider: 'chat-held',
      held: expect.objectContaining({ by: 'ops-ann', reason: 'their status page says degraded' }),
    }),
  );
  const metrics = await (await fetch(`${stack.apiUrl}/metrics`)).text();
  expect(metrics).toContain('onejob_provider_held{provider="chat-held"} 1');
  expect(metrics).toMatch(
    /onejob_provider_skips_total\{provider="chat-held",reason="held"\} [1-9]/,
  );
  const again = await cli(['providers', 'hold', 'chat-held', '--reason', 'again']);
  expect(again.code).toBe(1);
  expect(again.stderr.trim()).toMatch(
    /^onejob: provider chat-held is already held, by ops-ann since \S+Z: their status page says degraded$/,
  );
  // Only a change makes or lifts a hold: one written otherwise would say neither who nor why.
  await expect(stack.pool.query(`DELETE FROM provider_holds`)).rejects.toThrow(
    /provider_hold_changes/,
  );

  // Released: the waiting job runs on it, and both changes are kept as written.
  const released = await cli([
    'providers',
    'release',
    'chat-held',
    '--reason',
    'recovered',
    '--operator',
    'ops-bo',
  ]);
  expect(released.code).toBe(0);
  expect(triedOf(await untilJob(stack, waiting.id, succeeded))).toEqual([
    ['chat-held', 'succeeded'],
  ]);
  expect(await holdChanges('chat-held')).toEqual([
    { change: 'held', changed_by: 'ops-ann', reason: 'their status page says degraded' },
    { change: 'released', changed_by: 'ops-bo', reason: 'recovered' },
  ]);
  await expect(stack.pool.query(`DELETE FROM provider_hold_changes`)).rejects.toThrow(
    /kept as written/,
  );
  const twice = await cli(['providers', 'release', 'chat-held', '--reason', 'again']);
  expect(twice.stderr.trim()).toBe('onejob: provider chat-held is not held');
  const unknown = await cli(['providers', 'hold', 'no-such', '--reason', 'x']);
  expect(unknown.stderr.trim()).toMatch(
    /^onejob: no provider no-such is configured \(configured: /,
  );
});

test('a held provider’s attempt already made is still reconciled: its charge, answered nowhere, is found by the status lookup and recorded once', async () => {
  // The charge is made, but its answer never arrives: the attempt becomes unknown.
  stack.simulator.inject({
    route: 'charge',
    fault: { kind: 'hold', gate: 'held-provider-charge', then: { kind: 'drop_after' } },
  });
  const job = await createJob(stack, chargeBody(['pay-held']));
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'running' || rows[0]?.state === 'unknown',
  );
  expect((await cli(['providers', 'hold', 'pay-held', '--reason', 'outage'])).code).toBe(0);
  stack.simulator.openGate('held-provider-charge');
  const settled = await untilJob(stack, job.id, succeeded);
  expect(triedOf(settled)).toEqual([['pay-held', 'succeeded']]);
  expect(providerSaw(stack, job.id).effects).toHaveLength(1);
  expect((await cli(['providers', 'release', 'pay-held', '--reason', 'over'])).code).toBe(0);
});
