import { TEST_TOKEN } from './support/identities';
import { createJob, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { requestsFor } from './support/providerLedger';
import { chatProvider } from './support/providers';
import { useTestStack } from './support/stack';

/**
 * `GET /v1/jobs/:id?wait=` holds a request open until its job ends: it is woken by the job's
 * ending, it must stop when the client goes away, and one owner may hold only so many at once.
 */
const LIMIT = 20;
const stack = useTestStack({
  providers: (url) => [chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 10_000 })],
  env: {
    ONEJOB_MAX_WAITS_PER_OWNER: String(LIMIT),
    // Ten minutes between looks at the row: within a wait, only the job's ending wakes it.
    ONEJOB_WAIT_POLL_MS: '600000',
  },
});

/** The API's connection listening for job endings, if there is one now. */
async function listenerPid(): Promise<number | undefined> {
  const { rows } = await stack.pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND query = 'LISTEN onejob_job_ended'`,
  );
  return rows[0]?.pid;
}

/** A summary job whose provider call is held at `gate`, once that call is running. */
async function heldJob(gate: string) {
  stack.simulator.inject({ route: 'chat', fault: { kind: 'hold', gate } });
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: `Held at ${gate}. Somebody waits for it.` },
    providers: ['chat'],
  });
  await untilJob(stack, job.id, (j) => j.status === 'running');
  return job;
}

test('a waiting request answers as soon as its job ends, not at its next look at the row', async () => {
  const job = await heldJob('wait-wakes');
  const asked = Date.now();
  const waiting = stack.request('GET', `/v1/jobs/${job.id}?wait=60`);
  await eventually(waitsInProgress, (n) => n === 1);
  stack.simulator.openGate('wait-wakes');
  expect(await (await waiting).json()).toMatchObject({ status: 'succeeded' });
  // Its next look would have come only at the end of its 60 s: answering well before that
  // means the ending woke it (a wait that slept on answers at 60 s, and fails here).
  expect(Date.now() - asked).toBeLessThan(50_000);
});

test('a wait on the job id in upper case is woken by the job’s ending too: ids are normalised once', async () => {
  // Heard endings make a wait look rarely; until the API listens it polls, and would see any id.
  await eventually(listenerPid, (pid) => pid !== undefined);
  const job = await heldJob('wait-upper');
  const asked = Date.now();
  const waiting = stack.request('GET', `/v1/jobs/${job.id.toUpperCase()}?wait=60`);
  await eventually(waitsInProgress, (n) => n === 1);
  stack.simulator.openGate('wait-upper');
  const answered = (await (await waiting).json()) as { id: string; status: string };
  expect(answered).toMatchObject({ id: job.id, status: 'succeeded' });
  // As above: a wait its job's ending did not wake answers only at its 60 s deadline.
  expect(Date.now() - asked).toBeLessThan(50_000);
});

test('when the connection that hears job endings is lost, waits still see their job end, and it listens again', async () => {
  const before = await eventually(listenerPid, (pid) => pid !== undefined);
  const job = await heldJob('wait-unheard');
  const asked = Date.now();
  const waiting = stack.request('GET', `/v1/jobs/${job.id}?wait=60`);
  await eventually(waitsInProgress, (n) => n === 1);
  await stack.pool.query('SELECT pg_terminate_backend($1)', [before]);
  stack.simulator.openGate('wait-unheard');
  expect(await (await waiting).json()).toMatchObject({ status: 'succeeded' });
  // Whether the ending came before the connection was back or after, the wait saw it in time.
  expect(Date.now() - asked).toBeLessThan(50_000);
  await eventually(listenerPid, (pid) => pid !== undefined && pid !== before);
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
  // Its call has met the hang: the job created after the storm cannot meet it instead.
  await eventually(
    () => Promise.resolve(requestsFor(stack, job.id, 'chat').length),
    (n) => n === 1,
  );
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
