import { createJob, operator, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';

/**
 * Provider calls run on their own task queue with their own slots. A call that outlives its
 * attempt timeout keeps running up to its late-result window, holding its slot; a crowd of
 * them, every slot taken and more calls waiting for one, must never stop the bookkeeping
 * (admitting jobs, creating and settling attempts).
 */
const SLOTS = 8;
/** More hanging calls than slots: the rest wait on the provider-call task queue. */
const HANGING = SLOTS + 4;

const stack = useTestStack({
  providers: (url) => [
    // Always hangs; each call may run on for ten minutes after its attempt timed out, so no
    // slot comes free while the test runs, however slow the machine.
    chatProvider(url, 'hangs', 'sim-hangs', {
      timeoutMs: TIMES_OUT_SOON_MS,
      lateResultTimeoutMs: 600_000,
    }),
    chatProvider(url, 'steady', 'sim-steady', { timeoutMs: 10_000 }),
  ],
  env: { ONEJOB_MAX_CONCURRENT_PROVIDER_CALLS: String(SLOTS) },
});

/** The calls that reached the simulator for a model (each holds its slot: none is answered). */
const callsTo = (model: string) =>
  stack.simulator.requests().filter((r) => r.model === model).length;

test(`${HANGING} provider calls that hang, every one of the ${SLOTS} provider-call slots taken and the rest waiting, do not stop new jobs from being admitted, attempts from being created, or unknown attempts from being settled`, async () => {
  const hanging = await Promise.all(
    Array.from({ length: HANGING }, (_, i) =>
      createJob(stack, {
        type: 'summarize',
        input: { text: `Hanging job number ${i}. It never gets an answer.` },
        providers: ['hangs'],
      }),
    ),
  );
  // Every job has its attempt; as many calls as there are slots reached the provider and timed
  // out (their attempts are unknown), the others wait for a slot, their attempts not yet sent.
  const states = async () =>
    (await Promise.all(hanging.map((job) => attemptRows(stack.pool, job.id)))).flatMap((rows) =>
      rows.map((row) => row.state),
    );
  const full = await eventually(
    async () => ({ states: await states(), calls: callsTo('sim-hangs') }),
    (seen) =>
      seen.states.length === HANGING &&
      seen.states.filter((state) => state === 'unknown').length >= SLOTS &&
      seen.calls >= SLOTS,
    60_000,
  );
  expect(full.states.filter((state) => state === 'unknown')).toHaveLength(SLOTS);
  expect(full.states.filter((state) => state === 'starting')).toHaveLength(HANGING - SLOTS);
  expect(full.calls).toBe(SLOTS);

  // A new job is admitted and gets its attempt, whose call waits for a slot like the others.
  const fresh = await createJob(stack, {
    type: 'summarize',
    input: { text: 'A new job among the hanging ones. Its attempt is made at once.' },
    providers: ['steady'],
  });
  const admitted = await untilJob(stack, fresh.id, (j) => j.attempts.length === 1);
  expect(admitted.attempts.map((a) => [a.provider, a.state])).toEqual([['steady', 'starting']]);

  // An operator settles one of the unknown attempts (with its result: a `failed` would be held
  // while the hanging call may still land).
  const [victim] = (
    await stack.pool.query<{ job_id: string; id: string }>(
      `SELECT job_id, id FROM attempts WHERE state = 'unknown' ORDER BY id LIMIT 1`,
    )
  ).rows;
  const resolved = await operator(stack, 'POST', `/attempts/${victim!.id}/resolve`, {
    outcome: 'succeeded',
    reason: "the provider's console shows the answer",
    result: { summary: 'Hanging job number one.' },
  });
  expect(resolved.status).toBe(200);
  const settled = await untilJob(stack, victim!.job_id, (j) => j.status === 'succeeded');
  expect(settled.attempts.map((a) => a.state)).toEqual(['succeeded']);

  // All of that with every slot taken all along: no call got past the slots meanwhile.
  expect(callsTo('sim-hangs')).toBe(SLOTS);
  expect(callsTo('sim-steady')).toBe(0);
}, 300_000);
