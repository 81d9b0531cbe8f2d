import { TEST_TOKEN } from './support/identities';
import { createJob, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { useTestStack } from './support/stack';

/**
 * `GET /v1/jobs/:id?wait=` holds a request open while it polls the database: it must stop
 * when the client goes away, and one owner may hold only so many at once.
 */
const LIMIT = 20;
const stack = useTestStack({
  providers: (url) => [chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 10_000 })],
  env: { ONEJOB_MAX_WAITS_PER_OWNER: String(LIMIT) },
});

async function waitsInProgress(): Promise<number> {
  const text = await (await fetch(`${stack.apiUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('onejob_api_waits_in_progress '));
  return Number(line?.split(' ').pop());
}

test('one owner holds at most the limit of waits at once; past it, 429 problem+json with Retry-After', async () => {
  stack.simulator.inject({ route: 'chat', fault: { kind: 'hang' } });
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Nobody answers this one. Waiters pile up.' },
    providers: ['chat'],
  });
  const held = Array.from({ length: LIMIT }, () =>
    fetchAbortable(`${stack.apiUrl}/v1/jobs/${job.id}?wait=60`),
  );
  await eventually(waitsInProgress, (n) => n === LIMIT);
  const refused = await stack.request('GET', `/v1/jobs/${job.id}?wait=60`);
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(await refused.json()).toMatchObject({ type: '/problems/too-many-waits' });
  // A plain read is never refused.
  expect((await stack.request('GET', `/v1/jobs/${job.id}`)).status).toBe(200);
  for (const wait of held) wait.abort();
  await eventually(waitsInProgress, (n) => n === 0);
});

test('thousands of abandoned waits are released at once and leave creates and reads working', async () => {
  stack.simulator.inject({ route: 'chat', fault: { kind: 'hang' } });
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Thousands of clients wait, then leave. Nothing of them remains.' },
    providers: ['chat'],
  });
  const storm = Array.from({ length: 2_000 }, () =>
    fetchAbortable(`${stack.apiUrl}/v1/jobs/${job.id}?wait=60`),
  );
  await eventually(waitsInProgress, (n) => n === LIMIT);
  for (const wait of storm) wait.abort();
  await Promise.all(storm.map((wait) => wait.settled));
  // Every wait of a client that left has ended: nothing polls the database for them.
  await eventually(waitsInProgress, (n) => n === 0);
  const fresh = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Created after the storm. Done at once.' },
    providers: ['chat'],
  });
  await untilJob(stack, fresh.id, (j) => j.status === 'succeeded');
  // The owner's waits are free again.
  const again = await stack.request('GET', `/v1/jobs/${fresh.id}?wait=5`);
  expect(again.status).toBe(200);
});

/** A GET with the owner's token that the test can abort, as a client that goes away. */
function fetchAbortable(url: string) {
  const controller = new AbortController();
  const settled = fetch(url, {
    headers: { authorization: `Bearer ${TEST_TOKEN}` },
    signal: controller.signal,
  }).then(
    (response) => response.status,
    () => 'aborted' as const,
  );
  return { abort: () => controller.abort(), settled };
}
