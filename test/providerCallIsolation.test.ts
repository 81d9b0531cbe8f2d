import { createJob, operator, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { useTestStack } from './support/stack';

/**
 * Provider calls run on their own task queue with their own slots. A call that outlives its
 * attempt timeout keeps running up to its late-result window, holding its slot; a crowd of
 * them must never stop the bookkeeping (admitting jobs, creating and settling attempts).
 */
const HANGING = 120;

const stack = useTestStack({
  providers: (url) => [
    // Always hangs; each call may run on for two minutes after its attempt timed out.
    chatProvider(url, 'hangs', 'sim-hangs', {
      timeoutMs: TIMES_OUT_SOON_MS,
      lateResultTimeoutMs: 120_000,
    }),
    chatProvider(url, 'steady', 'sim-steady', { timeoutMs: 10_000 }),
  ],
});

test(`${HANGING} provider calls that hang do not stop new jobs from being admitted, attempts from being created, or unknown attempts from being settled`, async () => {
  const hanging = await Promise.all(
    Array.from({ length: HANGING }, (_, i) =>
      createJob(stack, {
        type: 'summarize',
        input: { text: `Hanging job number ${i}. It never gets an answer.` },
        providers: ['hangs'],
      }),
    ),
  );
  // Every one of those calls has reached the provider and is holding its slot.
  await eventually(
    async () => stack.simulator.requests().filter((r) => r.model === 'sim-hangs').length,
    (n) => n === HANGING,
    150_000,
  );
  await eventually(
    async () =>
      (
        await stack.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM attempts WHERE state = 'unknown'`,
        )
      ).rows[0]!.n,
    (n) => n === HANGING,
    150_000,
  );

  // A new job is admitted, gets its attempt, and its call runs to the end.
  const fresh = await createJob(stack, {
    type: 'summarize',
    input: { text: 'A new job among the hanging ones. It still runs at once.' },
    providers: ['steady'],
  });
  const done = await untilJob(stack, fresh.id, (j) => j.status === 'succeeded');
  expect(done.attempts.map((a) => a.state)).toEqual(['succeeded']);

  // An operator settles one of the hanging jobs' unknown attempts (with its result: a `failed`
  // would be held while the hanging call may still land).
  const victim = hanging[0]!;
  const resolved = await operator(stack, 'POST', `/attempts/${victim.id}:1/resolve`, {
    outcome: 'succeeded',
    reason: "the provider's console shows the answer",
    result: { summary: 'Hanging job number 0.' },
  });
  expect(resolved.status).toBe(200);
  const settled = await untilJob(stack, victim.id, (j) => j.status === 'succeeded');
  expect(settled.attempts.map((a) => a.state)).toEqual(['succeeded']);
}, 420_000);
