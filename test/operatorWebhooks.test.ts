import { claimNextDeliveries } from '../src/db/webhookDeliveryClaims';
import type { ProviderConfig } from '../src/providers/provider';
import { OPERATOR, OTHER_OWNER, OTHER_TOKEN, TEST_OWNER, TEST_TOKEN } from './support/identities';
import { createJob, operator, summarizeBody, untilJob } from './support/jobs';
import { waitingOrSettled } from './support/lockWaits';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { startTestStack, type TestStack } from './support/stack';
import { WebhookReceiver } from './support/webhookReceiver';

/**
 * Endpoints outlive the token that registered them (issue 55, N10): operators list any owner's
 * endpoints, disable, enable and delete them, and each action is kept with who, what, whose,
 * why and when. The real API and worker, and a receiver on a real port.
 */
const providers = (url: string): ProviderConfig[] => [chatProvider(url, 'chat', 'sim-steady')];

let stack: TestStack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  stack = await startTestStack({ providers });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await receiver?.down();
  await stack?.stop();
});

interface OperatorEndpoint {
  id: string;
  ownerId: string;
  url: string;
  disabledAt: string | null;
  disabledReason: string | null;
  disabledByOperator: boolean;
}
interface ActionRecord {
  id: string;
  at: string;
  operator: string;
  action: string;
  endpointId: string;
  ownerId: string;
  reason: string;
}

async function register(token: string, events?: string[]): Promise<{ id: string }> {
  const answer = await stack.request('POST', '/v1/webhooks', {
    token,
    body: { url: receiver.url, ...(events ? { events } : {}) },
  });
  expect(answer.status).toBe(201);
  const endpoint = (await answer.json()) as { id: string; secret: string };
  receiver.secret = endpoint.secret;
  return endpoint;
}

const ownerView = async (id: string, token = TEST_TOKEN) =>
  (await stack.request('GET', `/v1/webhooks/${id}`, { token })).json() as Promise<{
    disabledAt: string | null;
    disabledReason: string | null;
  }>;

const deliveriesOf = async (jobId: string) =>
  (
    (await (await stack.request('GET', `/v1/jobs/${jobId}/webhook-deliveries`)).json()) as {
      deliveries: Array<{ state: string; lastError: string | null; tries: unknown[] }>;
    }
  ).deliveries;

async function endedJob(): Promise<string> {
  const job = await createJob(stack, summarizeBody(['chat']));
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  return job.id;
}

test("an operator lists every owner's endpoints a page at a time, or one owner's, never with a secret; an owner's token opens none of it", async () => {
  const mine = [await register(TEST_TOKEN), await register(TEST_TOKEN)];
  const theirs = await register(OTHER_TOKEN);

  const seen: OperatorEndpoint[] = [];
  let texts = '';
  for (let cursor: string | null = null, pages = 0; pages < 50; pages += 1) {
    const answer = await operator(
      stack,
      'GET',
      `/webhooks?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      undefined,
    );
    expect(answer.status).toBe(200);
    const text = await answer.text();
    texts += text;
    const page = JSON.parse(text) as { endpoints: OperatorEndpoint[]; nextCursor: string | null };
    expect(page.endpoints.length).toBeLessThanOrEqual(1);
    seen.push(...page.endpoints);
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  const ids = seen.map((e) => e.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toEqual(expect.arrayContaining([...mine.map((e) => e.id), theirs.id]));
  expect(seen.find((e) => e.id === theirs.id)).toMatchObject({
    ownerId: OTHER_OWNER,
    url: receiver.url,
    disabledAt: null,
    disabledByOperator: false,
  });
  expect(texts).not.toContain('whsec_');
  expect(texts).not.toContain('"secret"');

  const filtered = (await (
    await operator(stack, 'GET', `/webhooks?owner=${encodeURIComponent(OTHER_OWNER)}`, undefined)
  ).json()) as { endpoints: OperatorEndpoint[] };
  expect(filtered.endpoints.map((e) => e.ownerId)).toEqual(
    filtered.endpoints.map(() => OTHER_OWNER),
  );
  expect(filtered.endpoints.map((e) => e.id)).toContain(theirs.id);

  const asOwner = await stack.request('GET', '/v1/operator/webhooks', { token: TEST_TOKEN });
  expect(asOwner.status).toBe(401);
  const badCursor = await operator(stack, 'GET', '/webhooks?cursor=nope', undefined);
  expect(badCursor.status).toBe(400);
  expect(await badCursor.json()).toMatchObject({ type: '/problems/invalid-cursor' });
  for (const e of mine) await stack.request('DELETE', `/v1/webhooks/${e.id}`);
  await stack.request('DELETE', `/v1/webhooks/${theirs.id}`, { token: OTHER_TOKEN });
});

test('an endpoint an operator disables is sent nothing more: what waited is abandoned saying so, new events make no delivery, its owner sees it disabled and cannot enable it; an operator enables it again', async () => {
  const endpoint = await register(TEST_TOKEN, ['job.succeeded']);
  // The receiver is away: the event waits, tried and refused.
  await receiver.down();
  const waiting = await createJob(stack, summarizeBody(['chat']));
  await eventually(
    () => deliveriesOf(waiting.id),
    (d) => d.length === 1 && d[0]!.state === 'pending' && d[0]!.tries.length >= 1,
    30_000,
  );

  const disabled = await operator(stack, 'POST', `/webhooks/${endpoint.id}/disable`, {
    reason: 'receiver points at a host the owner no longer controls',
  });
  expect(disabled.status).toBe(200);
  expect(await disabled.json()).toMatchObject({
    id: endpoint.id,
    ownerId: TEST_OWNER,
    disabledReason: 'an operator disabled the endpoint',
    disabledByOperator: true,
  });
  expect(await deliveriesOf(waiting.id)).toEqual([
    expect.objectContaining({ state: 'abandoned', lastError: 'an operator disabled the endpoint' }),
  ]);

  await receiver.up();
  // An ending's deliveries are written with the ending itself: none for a disabled endpoint.
  const later = await endedJob();
  expect(await deliveriesOf(later)).toEqual([]);

  expect(await ownerView(endpoint.id)).toMatchObject({
    disabledAt: expect.any(String),
    disabledReason: 'an operator disabled the endpoint',
  });
  const ownersEnable = await stack.request('POST', `/v1/webhooks/${endpoint.id}/enable`);
  expect(ownersEnable.status).toBe(409);
  expect(await ownersEnable.json()).toMatchObject({
    type: '/problems/endpoint-disabled-by-operator',
  });
  expect((await ownerView(endpoint.id)).disabledAt).not.toBeNull();

  const enabled = await operator(stack, 'POST', `/webhooks/${endpoint.id}/enable`, {
    reason: 'owner moved the receiver back',
  });
  expect(enabled.status).toBe(200);
  expect(await enabled.json()).toMatchObject({ disabledAt: null, disabledByOperator: false });
  const after = await endedJob();
  const [got] = await eventually(
    async () => receiver.of(after),
    (r) => r.length === 1,
    30_000,
  );
  expect(got!.verified).toMatchObject({ type: 'job.succeeded', data: { id: after } });
  // What was abandoned stays so: it is not sent after the enable.
  expect(await deliveriesOf(waiting.id)).toEqual([expect.objectContaining({ state: 'abandoned' })]);
  await stack.request('DELETE', `/v1/webhooks/${endpoint.id}`);
});

test("an operator deletes another owner's endpoint: gone for its owner, what waited is abandoned saying an operator deleted it", async () => {
  const endpoint = await register(OTHER_TOKEN, ['job.succeeded']);
  const deleted = await operator(stack, 'POST', `/webhooks/${endpoint.id}/delete`, {
    reason: 'owner account closed',
  });
  expect(deleted.status).toBe(200);
  expect(await deleted.json()).toMatchObject({
    id: endpoint.id,
    ownerId: OTHER_OWNER,
    deletedAt: expect.any(String),
  });
  expect(
    (await stack.request('GET', `/v1/webhooks/${endpoint.id}`, { token: OTHER_TOKEN })).status,
  ).toBe(404);
  const again = await operator(stack, 'POST', `/webhooks/${endpoint.id}/delete`, {
    reason: 'twice',
  });
  expect(again.status).toBe(404);
  const listed = (await (
    await operator(stack, 'GET', `/webhooks?owner=${encodeURIComponent(OTHER_OWNER)}`, undefined)
  ).json()) as { endpoints: OperatorEndpoint[] };
  expect(listed.endpoints.map((e) => e.id)).not.toContain(endpoint.id);
});

test('each operator action on an endpoint is recorded with who, what, whose, why and when, once; the database keeps the record as written and refuses one without a reason or naming another owner', async () => {
  const endpoint = await register(OTHER_TOKEN);
  for (const [action, reason] of [
    ['disable', 'abuse report 1'],
    ['disable', 'abuse report 1, again'],
    ['enable', 'resolved with the owner'],
    ['delete', 'owner asked us to'],
  ] as const) {
    const answer = await operator(stack, 'POST', `/webhooks/${endpoint.id}/${action}`, { reason });
    expect(answer.status).toBe(200);
  }
  const first = await operator(
    stack,
    'GET',
    `/webhook-actions?endpoint=${endpoint.id}&limit=2`,
    undefined,
  );
  const trail = (await first.json()) as { actions: ActionRecord[]; nextCursor: string | null };
  expect([first.status, trail]).toEqual([
    200,
    expect.objectContaining({ actions: expect.any(Array) }),
  ]);
  const rest = (await (
    await operator(
      stack,
      'GET',
      `/webhook-actions?endpoint=${endpoint.id}&cursor=${trail.nextCursor}`,
      undefined,
    )
  ).json()) as { actions: ActionRecord[]; nextCursor: string | null };
  const records = [...trail.actions, ...rest.actions];
  // Newest first; the disable that changed nothing is not an action.
  expect(records.map((r) => [r.action, r.reason])).toEqual([
    ['delete', 'owner asked us to'],
    ['enable', 'resolved with the owner'],
    ['disable', 'abuse report 1'],
  ]);
  expect(rest.nextCursor).toBeNull();
  for (const r of records) {
    expect(r).toMatchObject({ operator: OPERATOR, endpointId: endpoint.id, ownerId: OTHER_OWNER });
    expect(Date.now() - Date.parse(r.at)).toBeGreaterThanOrEqual(0);
  }
  const byOwner = (await (
    await operator(
      stack,
      'GET',
      `/webhook-actions?owner=${encodeURIComponent(OTHER_OWNER)}`,
      undefined,
    )
  ).json()) as { actions: ActionRecord[] };
  expect(byOwner.actions.every((r) => r.ownerId === OTHER_OWNER)).toBe(true);
  expect(byOwner.actions.map((r) => r.id)).toEqual(
    expect.arrayContaining(records.map((r) => r.id)),
  );

  const sqlError = (sql: string, values: unknown[]) =>
    stack.pool.query(sql, values).then(
      () => 'accepted',
      (error: { code?: string }) => error.code,
    );
  expect(
    await sqlError('UPDATE webhook_operator_actions SET reason = $2 WHERE id = $1', [
      records[0]!.id,
      'rewritten',
    ]),
  ).toBe('23514');
  expect(
    await sqlError('DELETE FROM webhook_operator_actions WHERE id = $1', [records[0]!.id]),
  ).toBe('23514');
  const insert = `INSERT INTO webhook_operator_actions (operator, action, endpoint_id, owner_id, reason)
                  VALUES ($1, $2, $3, $4, $5)`;
  expect(await sqlError(insert, [OPERATOR, 'disable', endpoint.id, OTHER_OWNER, ' '])).toBe(
    '23514',
  );
  expect(await sqlError(insert, [OPERATOR, 'disable', endpoint.id, TEST_OWNER, 'why'])).toBe(
    '23503',
  );
  expect(await sqlError(insert, [OPERATOR, 'rename', endpoint.id, OTHER_OWNER, 'why'])).toBe(
    '23514',
  );
});

test('an action without a reason, or with a blank one, is a 400 that changes nothing; an unknown endpoint is a 404', async () => {
  const endpoint = await register(TEST_TOKEN);
  for (const body of [{}, { reason: '' }, { reason: '  \n ' }]) {
    const answer = await operator(stack, 'POST', `/webhooks/${endpoint.id}/disable`, body);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  }
  expect((await ownerView(endpoint.id)).disabledAt).toBeNull();
  const none = await operator(stack, 'GET', `/webhook-actions?endpoint=${endpoint.id}`, undefined);
  expect(((await none.json()) as { actions: unknown[] }).actions).toEqual([]);
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
    const answer = await operator(stack, 'POST', `/webhooks/${id}/disable`, { reason: 'x' });
    expect(answer.status).toBe(404);
  }
  await stack.request('DELETE', `/v1/webhooks/${endpoint.id}`);
});

test("a sender never claims a delivery of an endpoint an operator disabled, even one whose ending's transaction committed while the sender was abandoning the endpoint's deliveries", async () => {
  // The job ends before the endpoint exists: the deliveries below are the test's own.
  const jobId = await endedJob();
  const endpoint = await register(TEST_TOKEN);
  expect(
    (
      await operator(stack, 'POST', `/webhooks/${endpoint.id}/disable`, {
        reason: 'claim race',
      })
    ).status,
  ).toBe(200);
  const insert = `INSERT INTO webhook_deliveries (job_id, endpoint_id, event, event_key)
                  VALUES ($1, $2, $3, $4) RETURNING id`;
  // One waiting delivery the sender's first step must wait for (a test transaction holds it) …
  const first = await stack.pool.query<{ id: string }>(insert, [
    jobId,
    endpoint.id,
    'job.needs_operator',
    'needs_operator:race',
  ]);
  const holder = await stack.pool.connect();
  const writer = await stack.pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [
      first.rows[0]!.id,
    ]);
    // … and one written by a transaction that saw the endpoint live (an ending's trigger),
    // committed after the sender's first step took its snapshot.
    await writer.query('BEGIN');
    await writer.query(insert, [jobId, endpoint.id, 'job.late_result', 'job.late_result:race']);
    const claim = claimNextDeliveries(stack.pool, jobId, 30_000, 8);
    expect(await waitingOrSettled(stack.pool, 'UPDATE webhook_deliveries d', claim)).toBe(
      'waiting',
    );
    await writer.query('COMMIT');
    await holder.query('COMMIT');
    expect((await claim).claimed).toEqual([]);
  } finally {
    holder.release();
    writer.release();
  }
  // The next claim abandons it, saying why.
  expect((await claimNextDeliveries(stack.pool, jobId, 30_000, 8)).claimed).toEqual([]);
  const { rows } = await stack.pool.query<{ state: string; last_error: string }>(
    'SELECT state, last_error FROM webhook_deliveries WHERE job_id = $1 ORDER BY position',
    [jobId],
  );
  expect(rows).toEqual([
    { state: 'abandoned', last_error: 'an operator disabled the endpoint' },
    { state: 'abandoned', last_error: 'an operator disabled the endpoint' },
  ]);
});
