import { OneJobClient, OneJobProblemError } from '../client/src';
import { listOwnedJobs } from '../src/db/jobLists';
import { CREATE_TRANSACTIONS_PER_OWNER } from '../src/service/ownerLimits';
import { holdTransaction } from './support/barriers';
import {
  LONGEST_OWNER,
  LONGEST_OWNER_TOKEN,
  OTHER_OWNER,
  OTHER_TOKEN,
  SPARE_OWNER,
  SPARE_TOKEN,
  TEST_OWNER,
  TEST_TOKEN,
  TRICK_OWNERS,
} from './support/identities';
import { freshKey, operator, type JobView } from './support/jobs';
import { chatProvider } from './support/providers';
import { useTestStack } from './support/stack';

/**
 * Fair shares between owners: each owner's create bucket and open jobs, shared by every API
 * replica through PostgreSQL, and list pages bounded in bytes. Buckets refill at one token per
 * 1,000 s, so no token comes back while a test runs: the counts of 201s and 429s are exact.
 */
const BURST = 3;
const OPEN_JOBS_OWNER = 'a';
const OPEN_JOBS_TOKEN = TRICK_OWNERS.a;
const REPLICAS_TOKEN = TRICK_OWNERS['a/b'];
const PAGE_MAX_BYTES = 250_000;

const stack = useTestStack({
  providers: (url) => [chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 20_000 })],
  env: {
    ONEJOB_OWNER_CREATES_PER_SECOND: '0.001',
    ONEJOB_OWNER_CREATE_BURST: String(BURST),
    ONEJOB_OWNER_LIMITS: JSON.stringify({
      [OPEN_JOBS_OWNER]: { createsPerSecond: null, maxOpenJobs: 2 },
      [LONGEST_OWNER]: { createsPerSecond: null },
    }),
    ONEJOB_LIST_PAGE_MAX_BYTES: String(PAGE_MAX_BYTES),
    ONEJOB_OWNER_WEBHOOK_REQUESTS_PER_SECOND: '0.001',
    ONEJOB_OWNER_WEBHOOK_REQUEST_BURST: String(BURST),
  },
});

const summarize = (text: string) => ({ type: 'summarize', input: { text }, providers: ['chat'] });

function create(
  token: string,
  body: unknown = summarize('Fair shares. Each owner has its own.'),
  key = freshKey('limit'),
  apiUrl?: string,
): Promise<Response> {
  const headers = { 'idempotency-key': key };
  if (apiUrl === undefined) return stack.request('POST', '/v1/jobs', { headers, body, token });
  return fetch(`${apiUrl}/v1/jobs`, {
    method: 'POST',
    headers: { ...headers, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const statuses = (responses: Response[]) => responses.map((r) => r.status).sort();

/** Creates until the owner's bucket refuses one (it holds BURST tokens at most). */
async function exhaust(token: string): Promise<void> {
  for (let i = 0; i <= BURST; i++) if ((await create(token)).status === 429) return;
  throw new Error('the bucket never refused a create');
}

test('a burst over the owner’s create bucket is refused 429 create-rate-limited with Retry-After from the bucket, while a retry of a job already made is still answered', async () => {
  const keys = Array.from({ length: BURST + 3 }, () => freshKey('burst'));
  const body = summarize('A burst. Only the bucket’s worth gets through.');
  const answers = await Promise.all(keys.map((key) => create(TEST_TOKEN, body, key)));
  expect(statuses(answers)).toEqual([
    ...Array<number>(BURST).fill(201),
    ...Array<number>(3).fill(429),
  ]);

  const refused = answers.find((r) => r.status === 429)!;
  expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = (await refused.json()) as { type: string; retryAfterSeconds: number };
  expect(problem.type).toBe('/problems/create-rate-limited');
  // One token per 1,000 s, and the bucket is empty: the next one is about 1,000 s away.
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBe(problem.retryAfterSeconds);
  expect(retryAfter).toBeGreaterThan(900);
  expect(retryAfter).toBeLessThanOrEqual(1000);

  // Every key whose job was made is answered again, with its job: a retry is never refused.
  for (const [i, key] of keys.entries()) {
    if (answers[i]!.status !== 201) continue;
    const made = (await answers[i]!.json()) as JobView;
    const replay = await create(TEST_TOKEN, body, key);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replay.json()) as JobView).id).toBe(made.id);
  }
  // A key refused for the bucket made nothing: it is still refused, not answered with a job.
  const refusedKey = keys[answers.findIndex((r) => r.status === 429)]!;
  expect((await create(TEST_TOKEN, body, refusedKey)).status).toBe(429);
  const { rows } = await stack.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM jobs WHERE owner_id = $1 AND idempotency_key = ANY($2)',
    [TEST_OWNER, keys],
  );
  expect(rows[0]!.n).toBe(BURST);
});

test('two API replicas sharing the database share one create bucket per owner', async () => {
  const extra = await stack.startExtraApi();
  const answers = await Promise.all(
    Array.from({ length: 2 * BURST + 2 }, (_, i) =>
      create(
        REPLICAS_TOKEN,
        undefined,
        freshKey('replica'),
        i % 2 === 0 ? stack.apiUrl : extra.url,
      ),
    ),
  );
  expect(statuses(answers)).toEqual([
    ...Array<number>(BURST).fill(201),
    ...Array<number>(BURST + 2).fill(429),
  ]);
  // Whichever replica refused, the wait it gives is the shared bucket's.
  for (const refused of answers.filter((r) => r.status === 429))
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(900);
  await extra.stop();
});

test('one owner’s empty create bucket leaves another owner’s bucket whole', async () => {
  await exhaust(TEST_TOKEN);
  const answers: Response[] = [];
  for (let i = 0; i <= BURST; i++) answers.push(await create(OTHER_TOKEN));
  expect(answers.map((r) => r.status)).toEqual([...Array<number>(BURST).fill(201), 429]);
  const { rows } = await stack.pool.query<{ owner_id: string }>(
    "SELECT owner_id FROM owner_buckets WHERE bucket = 'creates' AND owner_id = ANY($1) ORDER BY owner_id",
    [[TEST_OWNER, OTHER_OWNER]],
  );
  expect(rows.map((row) => row.owner_id).sort()).toEqual([OTHER_OWNER, TEST_OWNER].sort());
});

test('an owner’s jobs open at once stop at its limit (429 too-many-open-jobs), also for concurrent creates; retries are answered, and an ended job makes room', async () => {
  // The provider hangs: the jobs stay open for the test.
  stack.simulator.inject({ route: 'chat', times: 20, fault: { kind: 'hang' } });
  const keys = Array.from({ length: 5 }, () => freshKey('open'));
  const body = summarize('Open jobs. Only two at once.');
  const answers = await Promise.all(keys.map((key) => create(OPEN_JOBS_TOKEN, body, key)));
  expect(statuses(answers)).toEqual([201, 201, 429, 429, 429]);
  const refused = answers.find((r) => r.status === 429)!;
  expect(await refused.json()).toMatchObject({
    type: '/problems/too-many-open-jobs',
    maxOpenJobs: 2,
  });

  const firstKey = keys[answers.findIndex((r) => r.status === 201)]!;
  const first = (await (await create(OPEN_JOBS_TOKEN, body, firstKey)).json()) as JobView;
  expect((await create(OPEN_JOBS_TOKEN, body, firstKey)).status).toBe(200);

  const cancelled = await operator(stack, 'POST', `/jobs/${first.id}/cancel`, {
    reason: 'making room under the open-jobs limit',
  });
  expect(cancelled.status).toBe(200);
  expect((await create(OPEN_JOBS_TOKEN, body)).status).toBe(201);
  expect((await create(OPEN_JOBS_TOKEN, body)).status).toBe(429);
  const { rows } = await stack.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM jobs WHERE owner_id = $1 AND terminal_status IS NULL',
    [OPEN_JOBS_OWNER],
  );
  expect(rows[0]!.n).toBe(2);
});

test('a list page leaves out inputs and results unless asked, and a page with them stays under its byte bound', async () => {
  // Letters at random: PostgreSQL cannot compress them, so each input is stored at its size.
  const texts = Array.from({ length: 5 }, (_, i) => `${i} ${noise(i + 1, 96_000)}`);
  const made: string[] = [];
  for (const text of texts) {
    const response = await create(LONGEST_OWNER_TOKEN, summarize(text));
    expect(response.status).toBe(201);
    made.unshift(((await response.json()) as JobView).id);
  }

  const plain = await stack.request('GET', '/v1/jobs?limit=100', { token: LONGEST_OWNER_TOKEN });
  expect(plain.status).toBe(200);
  const plainText = await plain.text();
  expect(Buffer.byteLength(plainText)).toBeLessThan(20_000);
  const plainPage = JSON.parse(plainText) as { jobs: JobView[]; nextCursor: string | null };
  expect(plainPage.jobs.map((job) => job.id)).toEqual(made);
  expect(plainPage.nextCursor).toBeNull();
  for (const job of plainPage.jobs) {
    expect(job).not.toHaveProperty('input');
    expect(job).not.toHaveProperty('result');
  }

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `limit=100&include=input,result${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const response = await stack.request('GET', `/v1/jobs?${query}`, {
      token: LONGEST_OWNER_TOKEN,
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(PAGE_MAX_BYTES);
    const page = JSON.parse(text) as { jobs: JobView[]; nextCursor: string | null };
    expect(page.jobs.length).toBeGreaterThan(0);
    for (const job of page.jobs) {
      expect(job.input).toEqual({ text: texts[made.length - 1 - made.indexOf(job.id)] });
      expect(job).toHaveProperty('result');
    }
    seen.push(...page.jobs.map((job) => job.id));
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor);
  expect(seen).toEqual(made);
  expect(pages).toBeGreaterThan(1);

  const inputOnly = await stack.request('GET', '/v1/jobs?limit=1&include=input', {
    token: LONGEST_OWNER_TOKEN,
  });
  const [item] = ((await inputOnly.json()) as { jobs: JobView[] }).jobs;
  expect(item).toHaveProperty('input');
  expect(item).not.toHaveProperty('result');
  const unknown = await stack.request('GET', '/v1/jobs?include=attempts', {
    token: LONGEST_OWNER_TOKEN,
  });
  expect(unknown.status).toBe(400);

  // The API does not fetch a page's worth of bodies to send a few: PostgreSQL stops the rows.
  const fetched = await listOwnedJobs(stack.pool, LONGEST_OWNER, {
    limit: 100,
    withBodies: true,
    maxStoredBytes: PAGE_MAX_BYTES,
  });
  expect(fetched.jobs.map((job) => job.id)).toEqual(made.slice(0, 3));
  expect(fetched.next?.id).toBe(made[2]);
});

/** `length` letters and spaces from a fixed seed (xorshift). */
function noise(seed: number, length: number): string {
  let x = seed;
  let text = '';
  while (text.length < length) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const n = (x >>> 0) % 27;
    text += n === 26 ? ' ' : String.fromCharCode(97 + n);
  }
  return text;
}

test('the typed client does not wait out a Retry-After longer than it will wait: the caller gets the create-rate-limited problem at once', async () => {
  const token = TRICK_OWNERS['a:b'];
  await exhaust(token);
  const client = new OneJobClient({ baseUrl: stack.apiUrl, token });
  // The bucket's next token is about 1,000 s away; waiting for it would outlast this test.
  const refused = await client.createJob(summarize('Not now.')).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(OneJobProblemError);
  expect((refused as OneJobProblemError).problem.type).toBe('/problems/create-rate-limited');
});

test('copies of one create sent at once, more of them than the bucket holds, all get its one job: only the copy that made it takes a token', async () => {
  // The owner's first job makes its bucket (BURST - 1 tokens are left).
  expect((await create(SPARE_TOKEN)).status).toBe(201);
  // Every copy gets past the look for its key before any of them has made the job: the bucket
  // is held, so the first to take from it waits, and so does every copy after it.
  const barrier = await holdTransaction(
    stack,
    `SELECT 1 FROM owner_buckets WHERE owner_id = '${SPARE_OWNER}' AND bucket = 'creates' FOR UPDATE`,
  );
  const key = freshKey('storm');
  const body = summarize('One intent, sent nine times at once.');
  const copies = Array.from({ length: 3 * BURST }, () => create(SPARE_TOKEN, body, key));
  // As many as may be in a transaction at once for one owner wait in PostgreSQL; the rest wait
  // for their place in the API.
  await barrier.blocked('', Math.min(3 * BURST, CREATE_TRANSACTIONS_PER_OWNER));
  await barrier.release();
  const answers = await Promise.all(copies);
  expect(statuses(answers)).toEqual([...Array<number>(3 * BURST - 1).fill(200), 201]);
  const ids = new Set(
    await Promise.all(answers.map(async (r) => ((await r.json()) as JobView).id)),
  );
  expect(ids.size).toBe(1);
  // One token went to the copy that made the job: BURST - 2 new jobs still fit.
  const after = await Promise.all(Array.from({ length: BURST - 1 }, () => create(SPARE_TOKEN)));
  expect(statuses(after)).toEqual([...Array<number>(BURST - 2).fill(201), 429]);
});

test('copies of one create sent at once by an owner one job short of its open-jobs limit all get its job, never too-many-open-jobs', async () => {
  stack.simulator.inject({ route: 'chat', times: 20, fault: { kind: 'hang' } });
  // The limit is 2: leave exactly one open job before the storm.
  const open = await stack.pool.query<{ id: string }>(
    'SELECT id FROM jobs WHERE owner_id = $1 AND terminal_status IS NULL',
    [OPEN_JOBS_OWNER],
  );
  for (const { id } of open.rows)
    expect((await operator(stack, 'POST', `/jobs/${id}/cancel`, { reason: 'room' })).status).toBe(
      200,
    );
  expect((await create(OPEN_JOBS_TOKEN)).status).toBe(201);
  const counted = await stack.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM jobs WHERE owner_id = $1 AND terminal_status IS NULL',
    [OPEN_JOBS_OWNER],
  );
  expect(counted.rows[0]!.n).toBe(1);
  // Every copy finds no job under its key, then queues on the owner's lock, held here.
  const barrier = await holdTransaction(
    stack,
    `SELECT pg_advisory_xact_lock(hashtextextended('onejob.open-jobs:${OPEN_JOBS_OWNER}', 0))`,
  );
  const key = freshKey('storm-open');
  const copies = Array.from({ length: 8 }, () => create(OPEN_JOBS_TOKEN, undefined, key));
  await barrier.blocked('', Math.min(8, CREATE_TRANSACTIONS_PER_OWNER));
  await barrier.release();
  const answers = await Promise.all(copies);
  expect(statuses(answers)).toEqual([...Array<number>(7).fill(200), 201]);
  const ids = new Set(
    await Promise.all(answers.map(async (r) => ((await r.json()) as JobView).id)),
  );
  expect(ids.size).toBe(1);
});

test('the webhook routes draw from the owner’s own bucket: past it they answer 429 webhook-rate-limited with Retry-After, and another owner’s are untouched', async () => {
  const answers: Response[] = [];
  for (let i = 0; i <= BURST; i++)
    answers.push(await stack.request('GET', '/v1/webhooks', { token: TRICK_OWNERS['a:b'] }));
  expect(answers.map((r) => r.status)).toEqual([...Array<number>(BURST).fill(200), 429]);
  const refused = answers[BURST]!;
  expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = (await refused.json()) as { type: string; retryAfterSeconds: number };
  expect(problem.type).toBe('/problems/webhook-rate-limited');
  expect(Number(refused.headers.get('retry-after'))).toBe(problem.retryAfterSeconds);
  expect(problem.retryAfterSeconds).toBeGreaterThan(900);
  // A registration is refused the same way, before its body is looked at.
  const register = await stack.request('POST', '/v1/webhooks', {
    token: TRICK_OWNERS['a:b'],
    body: { url: 'https://example.com/hooks' },
  });
  expect(register.status).toBe(429);
  expect((await stack.request('GET', '/v1/webhooks', { token: OTHER_TOKEN })).status).toBe(200);
});

test('a flood of one owner’s creates waiting on its lock holds a few of the API’s connections, never all: another owner is answered meanwhile', async () => {
  const barrier = await holdTransaction(
    stack,
    `SELECT pg_advisory_xact_lock(hashtextextended('onejob.open-jobs:' || '${LONGEST_OWNER}', 0))`,
  );
  const flood = Array.from({ length: 20 }, () =>
    create(LONGEST_OWNER_TOKEN, summarize('One of a flood.')),
  );
  await barrier.blocked('', CREATE_TRANSACTIONS_PER_OWNER);
  // The flood holds its owner's few places; the pool still has connections for the others.
  const other = await stack.request('GET', '/v1/jobs?limit=1', { token: OTHER_TOKEN });
  expect(other.status).toBe(200);
  await barrier.release();
  expect(statuses(await Promise.all(flood))).toEqual(Array<number>(20).fill(201));
});
