import { WorkflowNotFoundError } from '@temporalio/client';
import { connect } from 'node:net';
import { insertJobOrFindExisting } from '../../src/db/jobs';
import { requestFingerprint } from '../../src/domain/fingerprint';
import { jobWorkflowId, MAX_WORKFLOW_ID_LENGTH } from '../../src/domain/workflowId';
import { simulatorProviders } from '../../src/providers/registry';
import { sweepJobs } from '../../src/service/sweeper';
import {
  LONGEST_OWNER_TOKEN,
  OTHER_OWNER,
  OTHER_TOKEN,
  TEST_OWNER,
  TEST_TOKEN,
  TRICK_OWNERS,
} from '../support/identities';
import { untilJob } from '../support/jobs';
import { providerSaw } from '../support/providerLedger';
import { startTestStack, type TestStack } from '../support/stack';
import { runsOfWorkflow, untilWorkflowClosed } from '../support/temporal';

interface JobBody {
  id: string;
  status: string;
  workflowId: string;
  input: Record<string, unknown>;
}

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

const summarize = (text: string) => ({ type: 'summarize', input: { text } });

/** A key of `length` characters that cycles through all of printable ASCII (no space at its ends). */
function printableKey(length: number): string {
  return Array.from({ length }, (_, i) => String.fromCharCode(0x20 + ((i + 1) % 95))).join('');
}

function post(key: string | undefined, body: unknown, token?: string): Promise<Response> {
  return stack.request('POST', '/v1/jobs', {
    body,
    headers: key === undefined ? {} : { 'idempotency-key': key },
    token,
  });
}

/** The job once it has ended, or as it is after 30 s. */
async function waitedJob(id: string, token?: string): Promise<JobBody> {
  return (await (
    await stack.request('GET', `/v1/jobs/${id}?wait=30`, { token })
  ).json()) as JobBody;
}

async function jobCount(): Promise<number> {
  const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM jobs');
  return rows[0].n;
}

async function expectDoubleClickIsOneJob(copies: number, key: string): Promise<void> {
  const body = summarize(`Double click number ${copies}. Only one job may come of it.`);
  const responses = await Promise.all(Array.from({ length: copies }, () => post(key, body)));
  const jobs = (await Promise.all(responses.map((r) => r.json()))) as JobBody[];

  expect(new Set(jobs.map((job) => job.id)).size).toBe(1);
  expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
  expect(
    responses
      .filter((r) => r.status === 200)
      .every((r) => r.headers.get('idempotent-replayed') === 'true'),
  ).toBe(true);
  const jobId = jobs[0]!.id;

  const { rows } = await stack.pool.query(
    'SELECT count(*)::int AS n FROM jobs WHERE owner_id = $1 AND idempotency_key = $2',
    [TEST_OWNER, key],
  );
  expect(rows[0].n).toBe(1);
  const done = await waitedJob(jobId);
  expect(done.status).toBe('succeeded');
  expect(await runsOfWorkflow(stack, jobWorkflowId(TEST_OWNER, key))).toHaveLength(1);
  expect(providerSaw(stack, jobId, 'chat')).toEqual({
    requests: [`${jobId}:1`],
    effects: [`${jobId}:1`],
  });
}

test('a double click (2 identical POSTs at once) is one job, one workflow, one provider call', async () => {
  await expectDoubleClickIsOneJob(2, 'double-click-2');
});

test('64 identical POSTs at once are one job, one workflow, one provider call', async () => {
  await expectDoubleClickIsOneJob(64, 'double-click-64');
});

test('the same key with a different input is refused with 409 and the job stays as it was', async () => {
  const first = await post('reuse-1', summarize('The original intent. It must not change.'));
  expect(first.status).toBe(201);
  const original = (await first.json()) as JobBody;

  const conflict = await post('reuse-1', summarize('A different intent under the same key.'));
  expect(conflict.status).toBe(409);
  expect(conflict.headers.get('x-should-retry')).toBe('false');
  expect(conflict.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(await conflict.json()).toMatchObject({
    type: '/problems/idempotency-key-reuse',
    status: 409,
    jobId: original.id,
  });

  const now = (await (await stack.request('GET', `/v1/jobs/${original.id}`)).json()) as JobBody;
  expect(now.input).toEqual({ text: 'The original intent. It must not change.' });
});

test('reordered keys and different whitespace are the same intent: 200 replay', async () => {
  const first = await post(
    'canonical-1',
    '{"type":"summarize","input":{"text":"Same words. Same intent."},"mode":"exclusive"}',
  );
  expect(first.status).toBe(201);
  const replay = await post(
    'canonical-1',
    '{\n  "mode": "exclusive",\n  "input": { "text": "Same words. Same intent." },\n  "type": "summarize"\n}',
  );
  expect(replay.status).toBe(200);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(((await replay.json()) as JobBody).id).toBe(((await first.json()) as JobBody).id);
  // Leaving out the default mode is the same intent too.
  const implicit = await post('canonical-1', summarize('Same words. Same intent.'));
  expect(implicit.status).toBe(200);
});

test('one key under two owners is two jobs, and one owner cannot see the other owner’s job', async () => {
  const a = await post('shared-key', summarize('Owner A asks. Owner A gets.'));
  const b = await post('shared-key', summarize('Owner B asks. Owner B gets.'), OTHER_TOKEN);
  expect([a.status, b.status]).toEqual([201, 201]);
  const jobA = (await a.json()) as JobBody;
  const jobB = (await b.json()) as JobBody;
  expect(jobA.id).not.toBe(jobB.id);
  expect(jobB.workflowId).toBe(jobWorkflowId(OTHER_OWNER, 'shared-key'));

  const peek = await stack.request('GET', `/v1/jobs/${jobA.id}`, { token: OTHER_TOKEN });
  expect(peek.status).toBe(404);
  expect(await peek.json()).toMatchObject({ type: '/problems/not-found' });
});

test('separator tricks across owner and key still make distinct jobs and workflows', async () => {
  const text = summarize('Separator tricks. Never collide.');
  const made = await Promise.all(
    [
      ['a:b', 'c'],
      ['a', 'b:c'],
      ['a/b', 'c'],
      ['a', 'b/c'],
    ].map(async ([owner, key]) => {
      const response = await post(key!, text, TRICK_OWNERS[owner as keyof typeof TRICK_OWNERS]);
      expect(response.status).toBe(201);
      return (await response.json()) as JobBody;
    }),
  );
  expect(new Set(made.map((job) => job.id)).size).toBe(4);
  expect(new Set(made.map((job) => job.workflowId)).size).toBe(4);
  expect(made.map((job) => job.workflowId)).toEqual([
    'job/a:b/c',
    'job/a/b:c',
    'job/a%2Fb/c',
    'job/a/b%2Fc',
  ]);
});

describe('the longest keys and owners the API accepts', () => {
  // Keys of the maximum length, including every character workflow ids escape, under the
  // longest owner of escaped characters: the readable id would be up to 960 characters, past
  // the 255 that the production engine accepts. Each must still be one job whose workflow runs.
  const longKeys: Array<[string, string, string]> = [
    ['255 plain characters', 'k'.repeat(255), TEST_TOKEN],
    ['255 escaped characters, longest owner', '%/'.repeat(127) + '%', LONGEST_OWNER_TOKEN],
    ['every printable character', printableKey(255), LONGEST_OWNER_TOKEN],
    [
      'the longest readable id, exactly 255',
      'r'.repeat(255 - `job/${TEST_OWNER}/`.length),
      TEST_TOKEN,
    ],
  ];

  test.each(longKeys)(
    '%s: created, run to success, and replayed as the same job',
    async (_name, key, token) => {
      const body = summarize('A long key. Still one job.');
      const created = await post(key, body, token);
      expect(created.status).toBe(201);
      const job = (await created.json()) as JobBody;
      expect(job.workflowId.length).toBeLessThanOrEqual(MAX_WORKFLOW_ID_LENGTH);
      const done = await waitedJob(job.id, token);
      expect(done.status).toBe('succeeded');
      const replay = await post(key, body, token);
      expect(replay.status).toBe(200);
      expect(((await replay.json()) as JobBody).id).toBe(job.id);
      // The workflow behind the id ran the job (it closes just after the row says succeeded).
      expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');
    },
  );

  test('two long keys that differ only in their last character are two jobs with two workflows', async () => {
    const body = summarize('Long keys that share a prefix. Two jobs.');
    const made = await Promise.all(
      ['a', 'b'].map(async (last) => {
        const response = await post(`${'p'.repeat(254)}${last}`, body);
        expect(response.status).toBe(201);
        return (await response.json()) as JobBody;
      }),
    );
    expect(made[0]!.id).not.toBe(made[1]!.id);
    expect(made[0]!.workflowId).not.toBe(made[1]!.workflowId);
  });
});

describe('bad requests get the right problem and write nothing', () => {
  const valid = summarize('A perfectly good text. Nothing wrong here.');
  const cases: Array<[string, () => Promise<Response>, number, string]> = [
    ['missing key', () => post(undefined, valid), 400, 'idempotency-key-missing'],
    ['key with a tab', () => post('tab\there', valid), 400, 'idempotency-key-invalid'],
    [
      'key with a non-ASCII character',
      () => post('caf\u00e9', valid),
      400,
      'idempotency-key-invalid',
    ],
    ['300-character key', () => post('k'.repeat(300), valid), 400, 'idempotency-key-invalid'],
    ['non-JSON body', () => post('bad-json', '{"type": "summarize", '), 400, 'malformed-body'],
    [
      'input of the wrong type',
      () => post('bad-input', { type: 'summarize', input: { text: 42 } }),
      400,
      'invalid-input',
    ],
    [
      'input that is not an object',
      () => post('bad-input-2', { type: 'summarize', input: 'text' }),
      400,
      'validation-error',
    ],
    [
      'unknown job type',
      () => post('bad-type', { type: 'teleport', input: {} }),
      400,
      'unknown-job-type',
    ],
    [
      'unknown provider',
      () => post('bad-provider', { ...valid, providers: ['nobody'] }),
      400,
      'unknown-provider',
    ],
    [
      'oversize body',
      () => post('too-big', summarize('x'.repeat(1_100_000))),
      413,
      'body-too-large',
    ],
    [
      'no token',
      () =>
        fetch(`${stack.apiUrl}/v1/jobs`, {
          method: 'POST',
          headers: { 'idempotency-key': 'no-token', 'content-type': 'application/json' },
          body: JSON.stringify(valid),
        }),
      401,
      'unauthorized',
    ],
    ['bad token', () => post('bad-token', valid, 'not-a-real-token'), 401, 'unauthorized'],
  ];

  test.each(cases)('%s', async (_name, send, status, type) => {
    const before = await jobCount();
    const response = await send();
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({ type: `/problems/${type}`, status });
    expect(await jobCount()).toBe(before);
  });

  test('invalid input names the field that is wrong', async () => {
    const response = await post('field-paths', { type: 'summarize', input: { text: '' } });
    expect(await response.json()).toMatchObject({ errors: [{ path: 'input.text' }] });
  });

  test('a NUL byte in the key (refused by the HTTP parser) still gets a problem document', async () => {
    const before = await jobCount();
    const port = Number(new URL(stack.apiUrl).port);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        const body = JSON.stringify(valid);
        socket.write(
          `POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-owner-a-0001\r\nIdempotency-Key: nul\0key\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
      });
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(body!)).toMatchObject({ type: '/problems/malformed-request', status: 400 });
    expect(await jobCount()).toBe(before);
  });
});

describe('a crash between the insert and the workflow start heals', () => {
  async function insertWithoutWorkflow(
    key: string,
    text: string,
    workflowId = jobWorkflowId(TEST_OWNER, key),
    startLeaseMs?: number,
  ): Promise<string> {
    const intent = {
      type: 'summarize',
      input: { text },
      providers: ['simulator'],
      mode: 'exclusive' as const,
    };
    const { job } = await insertJobOrFindExisting(stack.pool, {
      ownerId: TEST_OWNER,
      idempotencyKey: key,
      requestFingerprint: requestFingerprint({ ...intent, providers: null }),
      intent,
      workflowId,
      startLeaseMs,
    });
    return job.id;
  }

  const sweepNow = () =>
    sweepJobs(
      { pool: stack.pool, temporal: stack.temporal, taskQueue: stack.taskQueue },
      { olderThanMs: 0 },
    );

  test('on the client’s retry of the same request', async () => {
    const text = 'The API crashed after the insert. The retry must heal it.';
    const jobId = await insertWithoutWorkflow('healed-by-retry', text);
    const retry = await post('healed-by-retry', summarize(text));
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as JobBody).id).toBe(jobId);
    const done = await waitedJob(jobId);
    expect(done.status).toBe('succeeded');
  });

  test('a duplicate answers from the row without starting anything while the creator holds its start lease, and the first duplicate after the lease starts the workflow', async () => {
    const key = 'healed-after-lease';
    const text = 'The API crashed after the insert, holding the lease. Its duplicates wait it out.';
    const workflowId = jobWorkflowId(TEST_OWNER, key);
    const jobId = await insertWithoutWorkflow(key, text, workflowId, 3_600_000);
    const duplicates = await Promise.all(
      Array.from({ length: 8 }, () => post(key, summarize(text))),
    );
    for (const duplicate of duplicates) {
      expect(duplicate.status).toBe(200);
      expect((await duplicate.json()) as JobBody).toMatchObject({ id: jobId, status: 'pending' });
    }
    // Nobody started it: the lease says the creator is doing so.
    await expect(stack.temporal.workflow.getHandle(workflowId).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );

    // The lease passes (as an hour would): the next duplicate takes it over and heals the job.
    await stack.pool.query(
      "UPDATE jobs SET start_lease_until = now() - interval '1 second' WHERE id = $1",
      [jobId],
    );
    const healing = await post(key, summarize(text));
    expect(healing.status).toBe(200);
    expect((await waitedJob(jobId)).status).toBe('succeeded');
    expect(await runsOfWorkflow(stack, workflowId)).toHaveLength(1);
  });

  test('by the sweeper, when no retry comes', async () => {
    const jobId = await insertWithoutWorkflow(
      'healed-by-sweeper',
      'Nobody retried this one. The sweeper finds it.',
    );
    const report = await sweepNow();
    expect(report.started).toBeGreaterThanOrEqual(1);
    const done = await waitedJob(jobId);
    expect(done.status).toBe('succeeded');
    // Once its workflow has run, the job is no longer the sweeper's business.
    const { rows } = await stack.pool.query(
      'SELECT admitted_at IS NOT NULL AS admitted FROM jobs WHERE id = $1',
      [jobId],
    );
    expect(rows[0].admitted).toBe(true);
  });

  test('by the sweeper, past a job whose workflow the engine refuses: that one is reported, the next is started', async () => {
    // An id no engine takes (over 1000 characters), as a row made before ids were capped at 255
    // is on a server that enforces 255: its start is refused every time.
    const refused = await insertWithoutWorkflow(
      'refused-by-engine',
      'This workflow cannot start.',
      `job/${TEST_OWNER}/${'x'.repeat(1100)}`,
    );
    const healed = await insertWithoutWorkflow(
      'after-the-refused-one',
      'The sweeper must still reach this one.',
    );
    const report = await sweepNow();
    expect(report.refused).toBe(1);
    const done = await waitedJob(healed);
    expect(done.status).toBe('succeeded');
    const { rows } = await stack.pool.query('SELECT admitted_at FROM jobs WHERE id = $1', [
      refused,
    ]);
    expect(rows).toEqual([{ admitted_at: null }]);
    // Leave no job the next sweep would meet again.
    await stack.pool.query('DELETE FROM jobs WHERE id = $1', [refused]);
  });
});

test('a replay is answered from what was stored, not judged by today’s configuration: with a provider of its plan removed, the same request is still a 200 for its job', async () => {
  const key = `replay-removed-${Date.now()}`;
  const body = {
    type: 'summarize',
    input: { text: 'Planned on two providers. One is gone later.' },
    providers: ['simulator', 'simulator-backup'],
  };
  const first = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body,
  });
  expect(first.status).toBe(201);
  const job = (await first.json()) as { id: string };
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');

  // An API configured without `simulator-backup` (removed since the job was made).
  const today = simulatorProviders(stack.simulator.url).filter(
    (p) => p.name !== 'simulator-backup',
  );
  const api = await stack.startExtraApi({ ONEJOB_PROVIDERS: JSON.stringify(today) });
  try {
    const post = (payload: unknown) =>
      fetch(`${api.url}/v1/jobs`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TEST_TOKEN}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        body: JSON.stringify(payload),
      });
    const replay = await post(body);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replay.json()) as { id: string }).id).toBe(job.id);
    // Another intent under the key is judged as before: refused, the job unchanged.
    const other = await post({
      ...body,
      input: { text: 'Something else.' },
      providers: ['simulator'],
    });
    expect(other.status).toBe(409);
  } finally {
    await api.stop();
  }
});
