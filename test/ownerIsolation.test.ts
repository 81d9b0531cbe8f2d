import { jobWorkflowId } from '../src/domain/workflowId';
import {
  OPERATOR_TOKEN,
  OTHER_OWNER,
  OTHER_TOKEN,
  TEST_OWNER,
  TEST_TOKEN,
} from './support/identities';
import { chargeBody, createJob, freshKey, type JobView, readJob, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { requestsFor } from './support/providerLedger';
import { chatProvider, payProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';
import { workflowStatus } from './support/temporal';

/**
 * The token alone decides the owner, and another owner's job does not exist for you: not on the
 * list, not for "try again". Operators' routes take operators' tokens only, and owners' routes
 * take owners' tokens only.
 */
const stack = useTestStack({
  providers: (url) => [
    chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 20_000 }),
    chatProvider(url, 'chat-backup', 'sim-backup', { timeoutMs: 20_000 }),
    payProvider(url, 'pay', { timeoutMs: TIMES_OUT_SOON_MS }),
  ],
  hedgeDelayMs: 60_000,
  certify: [['chat-backup', 'summarize']],
});

const summarize = (text: string) => ({ type: 'summarize', input: { text }, providers: ['chat'] });

async function createAs(token: string, body: unknown, key = freshKey('iso')): Promise<JobView> {
  const response = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body,
    token,
  });
  expect(response.status).toBe(201);
  return (await response.json()) as JobView;
}

async function listAll(token: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const response = await stack.request('GET', `/v1/jobs?${query}`, { token });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { jobs: JobView[]; nextCursor: string | null };
    ids.push(...page.jobs.map((job) => job.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

async function ownedIds(owner: string): Promise<string[]> {
  const { rows } = await stack.pool.query<{ id: string }>(
    'SELECT id FROM jobs WHERE owner_id = $1 ORDER BY created_at DESC, id DESC',
    [owner],
  );
  return rows.map((row) => row.id);
}

test('GET /v1/jobs lists only the caller’s jobs: another owner’s never appear, on one page or paged one by one', async () => {
  const mine = [
    await createAs(TEST_TOKEN, summarize('Mine, first. Listed for me.')),
    await createAs(TEST_TOKEN, summarize('Mine, second. Listed for me.')),
  ];
  const theirs = [
    await createAs(OTHER_TOKEN, summarize('Theirs, first. Never listed for me.')),
    await createAs(OTHER_TOKEN, summarize('Theirs, second. Never listed for me.')),
  ];

  for (const [token, owner, own, foreign] of [
    [TEST_TOKEN, TEST_OWNER, mine, theirs],
    [OTHER_TOKEN, OTHER_OWNER, theirs, mine],
  ] as const) {
    const expected = await ownedIds(owner);
    for (const limit of [100, 1]) {
      const listed = await listAll(token, limit);
      expect(listed).toEqual(expected);
      expect(listed).toEqual(expect.arrayContaining(own.map((job) => job.id)));
      for (const job of foreign) expect(listed).not.toContain(job.id);
    }
  }
});

test('another owner’s POST /v1/jobs/:id/attempts is 404 and starts nothing; the owner’s own request starts the attempt', async () => {
  // The primary's call hangs, so the hedged job stays open and would take another attempt.
  stack.simulator.inject({ route: 'chat', times: 10, fault: { kind: 'hang' } });
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Only my token may ask again. Others get nothing.' },
    providers: ['chat', 'chat-backup'],
    mode: 'hedged',
  });
  await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'running');
  // The row says running before its call reaches the provider: wait for the call itself.
  await eventually(
    async () => requestsFor(stack, job.id, 'chat').length,
    (calls) => calls === 1,
  );

  for (const body of [{ provider: 'chat-backup' }, {}]) {
    const refused = await stack.request('POST', `/v1/jobs/${job.id}/attempts`, {
      body,
      token: OTHER_TOKEN,
    });
    expect(refused.status).toBe(404);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await refused.json()).toMatchObject({ type: '/problems/not-found' });
  }
  // Nothing started: one attempt row, one provider request, and the workflow knows of one.
  expect((await attemptRows(stack.pool, job.id)).map((a) => a.id)).toEqual([`${job.id}:1`]);
  expect(requestsFor(stack, job.id, 'chat')).toHaveLength(1);
  expect((await workflowStatus(stack, job.workflowId)).attempts).toHaveLength(1);

  // The same request with the owner's token is served.
  const mine = await stack.request('POST', `/v1/jobs/${job.id}/attempts`, {
    body: { provider: 'chat-backup' },
  });
  expect(mine.status).toBe(202);
  expect(await mine.json()).toMatchObject({ attemptId: `${job.id}:2`, provider: 'chat-backup' });
});

test('owners’ tokens cannot resolve attempts or cancel jobs, not even their own, and the operator’s token is no owner’s', async () => {
  // Sent, never answered; the status lookup keeps saying "still processing": unknown until settled.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
  const job = await createJob(stack, chargeBody(['pay']));
  await untilJob(stack, job.id, (j) => j.status === 'unknown');
  // The row says unknown first; the workflow says so once it has heard from its activity.
  await eventually(
    () => workflowStatus(stack, job.workflowId),
    (status) => status.status === 'unknown',
  );

  for (const token of [TEST_TOKEN, OTHER_TOKEN]) {
    const resolve = await stack.request('POST', `/v1/operator/attempts/${job.id}:1/resolve`, {
      body: { outcome: 'failed', reason: 'I am only the owner' },
      token,
    });
    expect(resolve.status).toBe(401);
    expect(await resolve.json()).toMatchObject({ type: '/problems/unauthorized' });
    const cancel = await stack.request('POST', `/v1/operator/jobs/${job.id}/cancel`, {
      body: { reason: 'I am only the owner' },
      token,
    });
    expect(cancel.status).toBe(401);
    expect(await cancel.json()).toMatchObject({ type: '/problems/unauthorized' });
  }
  // Untouched: still unknown in the database and in the workflow.
  expect((await attemptRows(stack.pool, job.id)).map((a) => a.state)).toEqual(['unknown']);
  const { rows } = await stack.pool.query(
    'SELECT terminal_status, version FROM jobs WHERE id = $1',
    [job.id],
  );
  expect(rows).toEqual([{ terminal_status: null, version: 0 }]);
  expect((await workflowStatus(stack, job.workflowId)).status).toBe('unknown');

  // An operator acts on any owner's job, but is no owner: the owners' routes refuse the token.
  for (const [method, path, body] of [
    ['GET', `/v1/jobs/${job.id}`, undefined],
    ['GET', '/v1/jobs', undefined],
    ['POST', `/v1/jobs/${job.id}/attempts`, {}],
    ['POST', '/v1/jobs', summarize('The operator owns nothing. Refused.')],
  ] as const) {
    const response = await stack.request(method, path, {
      body,
      token: OPERATOR_TOKEN,
      headers: { 'idempotency-key': freshKey('operator-as-owner') },
    });
    expect([method, path, response.status]).toEqual([method, path, 401]);
  }
  expect((await readJob(stack, job.id)).status).toBe('unknown');
});

test.each(['owner', 'ownerId', 'owner_id'])(
  'the owner comes from the token alone: a create body carrying "%s" is refused as invalid and writes nothing',
  async (field) => {
    const key = freshKey(`owner-in-body-${field}`);
    const refused = await stack.request('POST', '/v1/jobs', {
      headers: { 'idempotency-key': key },
      body: { ...summarize('Whose job is this? The token says.'), [field]: OTHER_OWNER },
    });
    expect(refused.status).toBe(400);
    const problem = (await refused.json()) as { type: string; errors: unknown[] };
    expect(problem.type).toBe('/problems/validation-error');
    expect(JSON.stringify(problem.errors)).toContain(field);
    const { rows } = await stack.pool.query(
      'SELECT owner_id FROM jobs WHERE idempotency_key = $1',
      [key],
    );
    expect(rows).toEqual([]);

    // Without the field, the same key makes the token's owner's job, never the body's.
    const made = await createAs(TEST_TOKEN, summarize('Whose job is this? The token says.'), key);
    expect(made.workflowId).toBe(jobWorkflowId(TEST_OWNER, key));
    const { rows: owners } = await stack.pool.query(
      'SELECT owner_id FROM jobs WHERE idempotency_key = $1',
      [key],
    );
    expect(owners).toEqual([{ owner_id: TEST_OWNER }]);
  },
);
