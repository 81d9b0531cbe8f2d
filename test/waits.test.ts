import { connect } from 'node:net';
import { OTHER_TOKEN, TEST_TOKEN } from './support/identities';
import { createJob, freshKey, untilJob, type JobView } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { insertSummaryJob } from './support/rows';
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

/** The waits an API process holds open now (its own gauge: each process counts its own). */
async function waitsInProgress(apiUrl = stack.apiUrl): Promise<number> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('onejob_api_waits_in_progress '));
  return Number(line?.split(' ').pop());
}

test('one owner holds at most the limit of waits at once; past it, 429 problem+json with Retry-After', async () => {
  // Both jobs' calls hang: neither ends while the waits on them are counted.
  stack.simulator.inject({ route: 'chat', times: 2, fault: { kind: 'hang' } });
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Nobody answers this one. Waiters pile up.' },
    providers: ['chat'],
  });
  const theirs = await createOtherOwnersJob('Nobody answers this one either. Another owner waits.');
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

  // The limit is the owner's, not the process's: while the first owner holds all of its waits,
  // another owner's wait is taken and held (a cap shared by all owners answers it 429 at once).
  const other = fetchAbortable(`${stack.apiUrl}/v1/jobs/${theirs.id}?wait=60`, OTHER_TOKEN);
  let answered: number | 'aborted' | undefined;
  void other.settled.then((outcome) => (answered = outcome));
  const seen = await eventually(
    async () => ({ waits: await waitsInProgress(), answered }),
    (now) => now.waits === LIMIT + 1 || now.answered !== undefined,
  );
  expect(seen).toEqual({ waits: LIMIT + 1, answered: undefined });
  // …and the first owner is still at its limit meanwhile.
  expect((await stack.request('GET', `/v1/jobs/${job.id}?wait=60`)).status).toBe(429);

  for (const wait of [...held, other]) wait.abort();
  await eventually(waitsInProgress, (n) => n === 0);
});

/** A summary job of the other owner (OTHER_TOKEN), created through the API. */
async function createOtherOwnersJob(text: string): Promise<JobView> {
  const response = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': freshKey('other-owner') },
    body: { type: 'summarize', input: { text }, providers: ['chat'] },
    token: OTHER_TOKEN,
  });
  if (response.status !== 201)
    throw new Error(`create as the other owner: ${response.status} ${await response.text()}`);
  return (await response.json()) as JobView;
}

/** Waits one owner holds open at once in the storm below: thousands, all held together. */
const STORM = 3_000;
/** How many arrive together: each wave is held before the next comes. */
const WAVE = 500;

test('thousands of abandoned waits are released at once and leave creates and reads working', async () => {
  // An API whose owner limit lets the whole storm in, so that every one of its waits is held.
  const api = await stack.startExtraApi({ ONEJOB_MAX_WAITS_PER_OWNER: String(STORM) });
  try {
    // A job that cannot end while they wait: its row is written, its workflow never started.
    const job = await insertSummaryJob(stack.pool, {
      key: freshKey('storm'),
      providers: ['chat'],
    });
    // They come in waves, as clients do: the first looks at the row of a few thousand requests
    // arriving in one instant would queue on the API's database pool past its timeout.
    const storm: Array<ReturnType<typeof socketWait>> = [];
    const answered: number[] = [];
    while (storm.length < STORM) {
      for (let i = 0; i < WAVE; i++) {
        const wait = socketWait(api.port, `/v1/jobs/${job.id}?wait=60`);
        void wait.settled.then((outcome) => outcome !== 'aborted' && answered.push(outcome));
        storm.push(wait);
      }
      const now = await eventually(
        async () => ({ held: await waitsInProgress(api.url), answered: [...answered] }),
        (seen) => seen.held + seen.answered.length === storm.length,
      );
      expect(now).toEqual({ held: storm.length, answered: [] });
    }
    // Every client goes away at once; every wait ends with it, soon after, not at its deadline.
    for (const wait of storm) wait.abort();
    const left = Date.now();
    await eventually(
      () => waitsInProgress(api.url),
      (n) => n === 0,
    );
    const releasedMs = Date.now() - left;
    expect(answered).toEqual([]);
    // Seconds at most (about 2 s here: the first read of /metrics after they left shows none),
    // where a wait that did not see its client leave would last until its 60 s deadline.
    expect(releasedMs).toBeLessThan(10_000);

    const fresh = await createJob(stack, {
      type: 'summarize',
      input: { text: 'Created after the storm. Done at once.' },
      providers: ['chat'],
    });
    await untilJob(stack, fresh.id, (j) => j.status === 'succeeded');
    // The owner's waits are free again, on the API that held the storm: its wait answers.
    const again = await fetch(`${api.url}/v1/jobs/${fresh.id}?wait=5`, {
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: fresh.id, status: 'succeeded' });
  } finally {
    await api.stop();
  }
}, 120_000);

/**
 * A GET with the owner's token on a socket of its own, as a client that goes away when
 * aborted (the socket is destroyed). Settles with the answer's status, or 'aborted' when the
 * connection closed without one. Cheaper than fetch by thousands: aborting thousands of fetches
 * costs the test process seconds.
 */
function socketWait(port: number, path: string) {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n\r\n`,
  );
  const settled = new Promise<number | 'aborted'>((resolve) => {
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (status) resolve(Number(status[1]));
    });
    socket.on('close', () => resolve('aborted'));
  });
  return { abort: () => socket.destroy(), settled };
}

/** A GET with an owner's token that the test can abort, as a client that goes away. */
function fetchAbortable(url: string, token = TEST_TOKEN) {
  const controller = new AbortController();
  const settled = fetch(url, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  }).then(
    (response) => response.status,
    () => 'aborted' as const,
  );
  return { abort: () => controller.abort(), settled };
}
