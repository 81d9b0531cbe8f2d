import { WorkflowFailedError } from '@temporalio/client';
import { RawValue, type ActivityFailure } from '@temporalio/common';
import { insertJobOrFindExisting } from '../../src/db/jobs';
import { FAILURES } from '../../src/domain/failures';
import { requestFingerprint } from '../../src/domain/fingerprint';
import { MAX_JSON_BYTES, MAX_JSON_DEPTH } from '../../src/domain/jsonShape';
import { jobWorkflowId } from '../../src/domain/workflowId';
import { sweepJobs } from '../../src/service/sweeper';
import {
  IdempotencyKeyReuseError,
  InvalidJobIdentityError,
  startJob,
} from '../../src/temporal/startJob';
import { jobWorkflowStartOptions } from '../../src/workflows/startOptions';
import { TEST_OWNER } from '../support/identities';
import { freshKey, operator } from '../support/jobs';
import { eventually } from '../support/polling';
import { providerSaw } from '../support/providerLedger';
import { startTestStack, type TestStack } from '../support/stack';
import { runsOfWorkflow } from '../support/temporal';

/** Services that run Temporal start jobs directly, and meet the HTTP API on the same job. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

const summarize = (text: string) => ({ type: 'summarize', input: { text } });

async function oneJobOneWorkflowOneCall(key: string, jobId: string): Promise<void> {
  const { rows } = await stack.pool.query(
    'SELECT id FROM jobs WHERE owner_id = $1 AND idempotency_key = $2',
    [TEST_OWNER, key],
  );
  expect(rows).toEqual([{ id: jobId }]);
  const done = (await (await stack.request('GET', `/v1/jobs/${jobId}?wait=30`)).json()) as {
    status: string;
  };
  expect(done.status).toBe('succeeded');
  expect(await runsOfWorkflow(stack, jobWorkflowId(TEST_OWNER, key))).toHaveLength(1);
  expect(providerSaw(stack, jobId, 'chat')).toEqual({
    requests: [`${jobId}:1`],
    effects: [`${jobId}:1`],
  });
}

test('a Temporal-native start writes the job row itself and runs it', async () => {
  const started = await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: 'native-only',
    taskQueue: stack.taskQueue,
    ...summarize('Started from Temporal. No HTTP involved.'),
  });
  await expect(started.result()).resolves.toMatchObject({
    jobId: started.jobId,
    status: 'succeeded',
  });
  await oneJobOneWorkflowOneCall('native-only', started.jobId);
});

test('HTTP first, then the Temporal-native start with the same (owner, key, intent): one job', async () => {
  const body = summarize('HTTP came first. Temporal joins it.');
  const created = (await (
    await stack.request('POST', '/v1/jobs', {
      headers: { 'idempotency-key': 'http-then-native' },
      body,
    })
  ).json()) as { id: string };
  const started = await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: 'http-then-native',
    taskQueue: stack.taskQueue,
    ...body,
  });
  expect(started.jobId).toBe(created.id);
  await oneJobOneWorkflowOneCall('http-then-native', created.id);
  // Once the job's workflow has ended, the same start still finds the same job.
  const again = await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: 'http-then-native',
    taskQueue: stack.taskQueue,
    ...body,
  });
  expect(again.jobId).toBe(created.id);
});

test('Temporal-native first, then HTTP with the same (owner, key, intent): one job', async () => {
  const body = summarize('Temporal came first. HTTP joins it.');
  const started = await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: 'native-then-http',
    taskQueue: stack.taskQueue,
    ...body,
  });
  const replay = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'native-then-http' },
    body,
  });
  expect(replay.status).toBe(200);
  expect(((await replay.json()) as { id: string }).id).toBe(started.jobId);
  await oneJobOneWorkflowOneCall('native-then-http', started.jobId);
});

test('a different intent under the same key is refused on both paths', async () => {
  await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'mismatch-a' },
    body: summarize('The first intent. Kept.'),
  });
  await expect(
    startJob(stack.temporal, {
      owner: TEST_OWNER,
      idempotencyKey: 'mismatch-a',
      taskQueue: stack.taskQueue,
      ...summarize('Another intent. Refused.'),
    }),
  ).rejects.toBeInstanceOf(IdempotencyKeyReuseError);

  await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: 'mismatch-b',
    taskQueue: stack.taskQueue,
    ...summarize('The first intent. Kept.'),
  });
  const conflict = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'mismatch-b' },
    body: summarize('Another intent. Refused.'),
  });
  expect(conflict.status).toBe(409);
  expect(await conflict.json()).toMatchObject({ type: '/problems/idempotency-key-reuse' });
});

test('an invalid intent started from Temporal is refused with the reason, and writes nothing', async () => {
  await expect(
    startJob(stack.temporal, {
      owner: TEST_OWNER,
      idempotencyKey: 'native-invalid',
      taskQueue: stack.taskQueue,
      type: 'summarize',
      input: { text: 42 },
    }),
  ).rejects.toThrow(/invalid-input/);
  const { rows } = await stack.pool.query(
    `SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'native-invalid'`,
  );
  expect(rows[0].n).toBe(0);
});

test('a run started under another key’s workflow id is refused at admission, writes nothing, and leaves that key free for its own job', async () => {
  // A start built by hand, for key "native-squatter" but under the id of key "native-squatted".
  const squatter = 'native-squatter';
  const squatted = 'native-squatted';
  const intent = {
    type: 'summarize',
    input: { text: 'Under the wrong id.' },
    providers: null,
    mode: 'exclusive' as const,
  };
  const options = jobWorkflowStartOptions(
    {
      ownerId: TEST_OWNER,
      idempotencyKey: squatter,
      type: intent.type,
      mode: intent.mode,
      requestFingerprint: requestFingerprint(intent),
    },
    stack.taskQueue,
  );
  const handle = await stack.temporal.workflow.start(options.workflowType, {
    ...options,
    workflowId: jobWorkflowId(TEST_OWNER, squatted),
    args: [{ ...options.args[0], intent }],
  });
  await expect(handle.result()).rejects.toThrow();
  const history = JSON.stringify(await handle.fetchHistory());
  expect(history).toMatch(/is not the one derived from this owner and key/);
  const { rows } = await stack.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = ANY($1)',
    [[squatter, squatted]],
  );
  expect(rows[0]!.n).toBe(0);
  // The squatted key's own job runs under its own id.
  const own = await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: squatted,
    taskQueue: stack.taskQueue,
    ...summarize('The rightful owner of this id.'),
  });
  await expect(own.result()).resolves.toMatchObject({ status: 'succeeded' });
});

test('after an operator releases a key, startJob and HTTP give one answer: the key’s next generation, whichever entry point comes first', async () => {
  const key = freshKey('native-release');
  const body = summarize('Run again after a release.');
  const start = () =>
    startJob(stack.temporal, {
      owner: TEST_OWNER,
      idempotencyKey: key,
      taskQueue: stack.taskQueue,
      ...body,
    });
  const create = async () => {
    const response = await stack.request('POST', '/v1/jobs', {
      headers: { 'idempotency-key': key },
      body,
    });
    return { status: response.status, id: ((await response.json()) as { id: string }).id };
  };
  const release = async (id: string) =>
    expect(
      (await operator(stack, 'POST', `/jobs/${id}/release-key`, { reason: 'run it again' })).status,
    ).toBe(200);
  const generationOf = async (id: string) =>
    (
      await stack.pool.query<{ key_generation: number; workflow_id: string }>(
        'SELECT key_generation, workflow_id FROM jobs WHERE id = $1',
        [id],
      )
    ).rows[0];

  // Generation 1 from Temporal; its workflow has closed when the key is released.
  const first = await start();
  await expect(first.result()).resolves.toMatchObject({ status: 'succeeded' });
  await release(first.jobId);

  // startJob first: generation 2, under that generation's workflow id; HTTP then finds it.
  const second = await start();
  expect(second.jobId).not.toBe(first.jobId);
  expect(second.workflowId).toBe(jobWorkflowId(TEST_OWNER, key, 2));
  expect(await generationOf(second.jobId)).toEqual({
    key_generation: 2,
    workflow_id: second.workflowId,
  });
  await expect(second.result()).resolves.toMatchObject({
    jobId: second.jobId,
    status: 'succeeded',
  });
  expect(await create()).toEqual({ status: 200, id: second.jobId });
  expect((await start()).jobId).toBe(second.jobId);

  // HTTP first: generation 3; startJob then finds it, and so does its handle's result.
  await release(second.jobId);
  const third = await create();
  expect(third.status).toBe(201);
  expect((await generationOf(third.id))?.key_generation).toBe(3);
  const found = await start();
  expect(found.jobId).toBe(third.id);
  expect(found.workflowId).toBe(jobWorkflowId(TEST_OWNER, key, 3));
  await expect(found.result()).resolves.toMatchObject({ jobId: third.id, status: 'succeeded' });
});

describe('whichever entry point wins the row wins the job', () => {
  const intentOf = (text: string) => ({
    type: 'summarize',
    input: { text },
    providers: null,
    mode: 'exclusive' as const,
  });

  /** The API crashed after its insert, before it started the workflow. */
  async function insertWithoutWorkflow(key: string, text: string): Promise<string> {
    const intent = intentOf(text);
    const { job } = await insertJobOrFindExisting(stack.pool, {
      ownerId: TEST_OWNER,
      idempotencyKey: key,
      requestFingerprint: requestFingerprint(intent),
      intent: { ...intent, providers: ['simulator'] },
      workflowId: jobWorkflowId(TEST_OWNER, key),
    });
    return job.id;
  }
  const sweep = () =>
    sweepJobs(
      { pool: stack.pool, temporal: stack.temporal, taskQueue: stack.taskQueue },
      { olderThanMs: 0 },
    );
  const succeeds = async (jobId: string) =>
    (await (await stack.request('GET', `/v1/jobs/${jobId}?wait=30`)).json()) as { status: string };

  test('an HTTP insert that wins the row while a Temporal-native start with another intent holds the workflow id: the native start is refused and the HTTP job runs', async () => {
    const key = 'race-native-holds-id';
    // The native start's run exists, but nothing runs it yet (no worker on its queue).
    const heldQueue = `${stack.taskQueue}-held`;
    const native = startJob(stack.temporal, {
      owner: TEST_OWNER,
      idempotencyKey: key,
      taskQueue: heldQueue,
      ...summarize('The native intent. Refused.'),
    });
    native.catch(() => undefined);
    const handle = stack.temporal.workflow.getHandle(jobWorkflowId(TEST_OWNER, key));
    await eventually(
      () =>
        handle.describe().then(
          (d) => d.status.name,
          () => 'MISSING',
        ),
      (status) => status === 'RUNNING',
    );
    // The HTTP create inserts its row first…
    const created = stack.request('POST', '/v1/jobs', {
      headers: { 'idempotency-key': key },
      body: summarize('The HTTP intent. Kept.'),
    });
    const jobId = await eventually(
      async () =>
        (
          await stack.pool.query<{ id: string }>(
            'SELECT id FROM jobs WHERE owner_id = $1 AND idempotency_key = $2',
            [TEST_OWNER, key],
          )
        ).rows[0]?.id,
      (id) => id !== undefined,
    );
    // …then the native run is picked up: its admission finds another intent's row.
    await stack.startWorkerOn(heldQueue);
    await expect(native).rejects.toBeInstanceOf(IdempotencyKeyReuseError);
    const response = await created;
    expect(response.status).toBe(201);
    expect(((await response.json()) as { id: string }).id).toBe(jobId);
    // Should the create have given up waiting for the refused run, the sweeper starts the job.
    await sweep();
    expect((await succeeds(jobId!)).status).toBe('succeeded');
    expect(providerSaw(stack, jobId!, 'chat')).toEqual({
      requests: [`${jobId}:1`],
      effects: [`${jobId}:1`],
    });
  });

  test.each([
    ['the client retries its POST', 'retry'],
    ['nobody retries: the sweeper', 'sweep'],
  ])(
    'a crash between the HTTP insert and its start, then a Temporal-native start with another intent: the native start is refused and the HTTP job runs when %s',
    async (_title, healer) => {
      const key = `crash-then-native-${healer}`;
      const text = 'The HTTP intent, inserted just before the crash.';
      const jobId = await insertWithoutWorkflow(key, text);
      await expect(
        startJob(stack.temporal, {
          owner: TEST_OWNER,
          idempotencyKey: key,
          taskQueue: stack.taskQueue,
          ...summarize('A native start with another intent.'),
        }),
      ).rejects.toBeInstanceOf(IdempotencyKeyReuseError);
      if (healer === 'retry') {
        const retry = await stack.request('POST', '/v1/jobs', {
          headers: { 'idempotency-key': key },
          body: summarize(text),
        });
        expect(retry.status).toBe(200);
      } else {
        expect((await sweep()).started).toBeGreaterThanOrEqual(1);
      }
      expect((await succeeds(jobId)).status).toBe('succeeded');
    },
  );
});

describe('the Temporal-native entry validates like the API', () => {
  test.each([
    ['a key of 256 characters', TEST_OWNER, 'k'.repeat(256)],
    ['a key with a control character', TEST_OWNER, 'line\nbreak'],
    ['an empty owner', '', 'fine-key'],
    ['a non-ASCII key', TEST_OWNER, 'clé'],
  ])('%s is refused at once with a typed error, and nothing is started', async (_t, owner, key) => {
    await expect(
      startJob(stack.temporal, {
        owner,
        idempotencyKey: key,
        taskQueue: stack.taskQueue,
        ...summarize('Never started.'),
      }),
    ).rejects.toBeInstanceOf(InvalidJobIdentityError);
    const { rows } = await stack.pool.query(
      'SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = $1',
      [key],
    );
    expect(rows[0].n).toBe(0);
  });

  test('a job workflow started by hand (or as a child) with a key the database refuses fails at once, typed, instead of retrying for ever', async () => {
    const workflowId = `bad-identity-${Date.now()}`;
    const handle = await stack.temporal.workflow.start('jobWorkflow', {
      workflowId,
      taskQueue: stack.taskQueue,
      args: [
        {
          ownerId: TEST_OWNER,
          idempotencyKey: 'k'.repeat(300),
          intent: {
            type: 'summarize',
            input: { text: 'Too long a key.' },
            providers: null,
            mode: 'exclusive',
          },
        },
      ],
    });
    const failure = await handle.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(((failure as WorkflowFailedError).cause as ActivityFailure).cause).toMatchObject({
      type: 'InvalidJob',
      message: expect.stringMatching(/idempotency key must be 1-255 printable ASCII characters/),
    });
  });
});

describe('a Temporal-native input gets the HTTP API’s depth and size limits before anything runs', () => {
  /** An array nested `levels` deep, built without recursion. */
  const nestedArray = (levels: number): unknown => {
    let value: unknown = 'bottom';
    for (let i = 0; i < levels; i++) value = [value];
    return value;
  };
  const rowsOfKey = async (key: string) =>
    (
      await stack.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = $1',
        [key],
      )
    ).rows[0]!.n;
  const workflowExists = (workflowId: string) =>
    stack.temporal.workflow
      .getHandle(workflowId)
      .describe()
      .then(
        () => true,
        () => false,
      );

  test.each([
    [
      'nested 100,000 deep',
      { text: 'Deep.', deep: nestedArray(100_000) },
      /nested deeper than 100/,
    ],
    ['larger than the API’s body limit', { text: 'x'.repeat(MAX_JSON_BYTES) }, /larger than/],
  ])(
    'startJob refuses an input %s at once, typed and final, and starts and writes nothing',
    async (_t, input, reason) => {
      const key = freshKey('native-shape');
      const refused = await startJob(stack.temporal, {
        owner: TEST_OWNER,
        idempotencyKey: key,
        taskQueue: stack.taskQueue,
        type: 'summarize',
        input,
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toMatchObject({
        type: FAILURES.invalidJob,
        nonRetryable: true,
        message: expect.stringMatching(reason),
      });
      expect(await workflowExists(jobWorkflowId(TEST_OWNER, key))).toBe(false);
      expect(await rowsOfKey(key)).toBe(0);
    },
  );

  test('a job workflow started by another client with an input nested 100,000 deep fails at once, typed, instead of retrying for ever, and writes nothing', async () => {
    const key = freshKey('native-deep-by-hand');
    const workflowId = jobWorkflowId(TEST_OWNER, key);
    // Our client cannot even serialize such a value; another SDK or the CLI can send its text.
    const deep = `${'['.repeat(100_000)}0${']'.repeat(100_000)}`;
    const text = `{"ownerId":${JSON.stringify(TEST_OWNER)},"idempotencyKey":${JSON.stringify(key)},"intent":{"type":"summarize","input":{"text":"Deep.","deep":${deep}},"providers":null,"mode":"exclusive"}}`;
    const handle = await stack.temporal.workflow.start('jobWorkflow', {
      workflowId,
      taskQueue: stack.taskQueue,
      args: [
        RawValue.fromPayload({
          metadata: { encoding: new TextEncoder().encode('json/plain') },
          data: new TextEncoder().encode(text),
        }),
      ],
    });
    await eventually(
      () => handle.describe().then((d) => d.status.name),
      (status) => status !== 'RUNNING',
    );
    const failure = await handle.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(((failure as WorkflowFailedError).cause as ActivityFailure).cause).toMatchObject({
      type: FAILURES.invalidJob,
      message: expect.stringMatching(/nested deeper than 100/),
    });
    expect(await rowsOfKey(key)).toBe(0);
  });

  test('the limits are the API’s: an intent one level too deep is refused by both entry points with the same reason', async () => {
    // The body (or the intent) is level 1 and its input level 2.
    let input: Record<string, unknown> = { text: 'Deep.' };
    for (let level = 2; level < MAX_JSON_DEPTH + 1; level++)
      input = { text: 'Deep.', inner: input };
    const key = freshKey('native-one-too-deep');
    const http = await stack.request('POST', '/v1/jobs', {
      headers: { 'idempotency-key': key },
      body: { type: 'summarize', input },
    });
    expect(http.status).toBe(400);
    const { detail } = (await http.json()) as { detail: string };
    expect(detail).toMatch(/nested deeper than 100/);
    await expect(
      startJob(stack.temporal, {
        owner: TEST_OWNER,
        idempotencyKey: key,
        taskQueue: stack.taskQueue,
        type: 'summarize',
        input,
      }),
    ).rejects.toMatchObject({ type: FAILURES.invalidJob, message: `invalid-input: ${detail}` });
  });
});
