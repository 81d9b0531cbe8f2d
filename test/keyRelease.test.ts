import { jobWorkflowId } from '../src/domain/workflowId';
import { OPERATOR, TEST_OWNER } from './support/identities';
import { createJob, freshKey, operator, readJob, untilJob, type JobView } from './support/jobs';
import { eventually } from './support/polling';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';

/**
 * Keys never expire, except by an operator's audited release of an ended job's key: the next
 * create with the same (owner, key) is then a new job of the key's next generation, with a
 * workflow id of its own, linked both ways to the job it supersedes.
 */
const stack = useTestStack();

type Released = JobView & {
  keyGeneration: number;
  keyRelease: { operator: string; reason: string; at: string } | null;
  supersedes: string | null;
  supersededBy: string | null;
};

const summary = (text: string) => ({ type: 'summarize', input: { text } });

function post(key: string, body: unknown): Promise<Response> {
  return stack.request('POST', '/v1/jobs', { headers: { 'idempotency-key': key }, body });
}

const release = (id: string, reason = 'customer asked to run it again') =>
  operator(stack, 'POST', `/jobs/${id}/release-key`, { reason });

test('after an operator releases an ended job’s key, the next create with it is a 201 for a new job, with its own workflow id, linked both ways', async () => {
  const key = freshKey('release');
  const first = await createJob(stack, summary('First run. It ends.'), key);
  await untilJob(stack, first.id, (j) => j.status === 'succeeded');

  const released = await release(first.id);
  expect(released.status).toBe(200);
  const record = (await released.json()) as {
    jobId: string;
    keyGeneration: number;
    keyRelease: { operator: string; reason: string; at: string };
  };
  expect(record).toMatchObject({
    jobId: first.id,
    keyGeneration: 1,
    keyRelease: { operator: OPERATOR, reason: 'customer asked to run it again' },
  });
  expect(Date.parse(record.keyRelease.at)).not.toBeNaN();

  // Another intent is allowed now: the key is free.
  const again = await post(key, summary('Second run. A new job.'));
  expect(again.status).toBe(201);
  const second = (await again.json()) as Released;
  expect(second.id).not.toBe(first.id);
  expect(second).toMatchObject({ keyGeneration: 2, supersedes: first.id, supersededBy: null });
  expect(second.workflowId).toBe(jobWorkflowId(TEST_OWNER, key, 2));
  expect(second.workflowId).not.toBe(first.workflowId);
  await untilJob(stack, second.id, (j) => j.status === 'succeeded');

  // The old job stays, released and linked; the key now answers with the new one.
  const old = (await readJob(stack, first.id)) as Released;
  expect(old).toMatchObject({
    status: 'succeeded',
    keyGeneration: 1,
    keyRelease: { operator: OPERATOR },
    supersededBy: second.id,
  });
  const replay = await post(key, summary('Second run. A new job.'));
  expect(replay.status).toBe(200);
  expect(((await replay.json()) as Released).id).toBe(second.id);
  expect((await post(key, summary('First run. It ends.'))).status).toBe(409);

  // Released once: a second release is refused and names the first.
  const twice = await release(first.id);
  expect(twice.status).toBe(409);
  expect(await twice.json()).toMatchObject({ type: '/problems/key-already-released' });
});

test('a key is released only by an operator and only once its job has ended; the running job keeps its key', async () => {
  stack.simulator.inject({ route: 'chat', fault: { kind: 'hold', gate: 'release-running' } });
  const key = freshKey('release-running');
  const job = await createJob(stack, summary('Still thinking. Keep my key.'), key);
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'running',
  );
  const early = await release(job.id);
  expect(early.status).toBe(409);
  expect(await early.json()).toMatchObject({ type: '/problems/job-not-ended' });
  // An owner cannot release even an ended job: the operator routes take operator tokens only.
  stack.simulator.openGate('release-running');
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  const byOwner = await stack.request('POST', `/v1/operator/jobs/${job.id}/release-key`, {
    body: { reason: 'mine' },
  });
  expect(byOwner.status).toBe(401);
  const replay = await post(key, summary('Still thinking. Keep my key.'));
  expect(replay.status).toBe(200);
  expect(((await replay.json()) as Released).id).toBe(job.id);
  expect((await readJob(stack, job.id)) as Released).toMatchObject({ keyRelease: null });
});

test('PostgreSQL itself refuses to release the key of a job that has not ended, and to keep two unreleased jobs under one key', async () => {
  stack.simulator.inject({ route: 'chat', fault: { kind: 'hold', gate: 'release-db' } });
  const key = freshKey('release-db');
  const job = await createJob(stack, summary('Held. The database guards the key.'), key);
  await expect(
    stack.pool.query(
      `UPDATE jobs SET key_release = '{"operator":"x","reason":"y","at":"z"}' WHERE id = $1`,
      [job.id],
    ),
  ).rejects.toThrow(/jobs_release_only_when_ended/);
  await expect(
    stack.pool.query(
      `INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, job_type, input,
                         provider_plan, workflow_id, key_generation, supersedes)
       VALUES ($1, $2, repeat('0', 64), 'summarize', '{}', ARRAY['simulator'], 'w', 2, $3)`,
      [TEST_OWNER, key, job.id],
    ),
  ).rejects.toThrow(/jobs_live_key_idx/);
  stack.simulator.openGate('release-db');
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');
});

test('two first creates racing after a release make one new job, in every interleaving', async () => {
  const key = freshKey('release-race');
  const first = await createJob(stack, summary('Raced after release.'), key);
  await untilJob(stack, first.id, (j) => j.status === 'succeeded');
  expect((await release(first.id)).status).toBe(200);
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => post(key, summary('Raced after release.'))),
  );
  const statuses = answers.map((answer) => answer.status).sort();
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
  const ids = new Set(
    await Promise.all(answers.map(async (a) => ((await a.json()) as Released).id)),
  );
  expect(ids.size).toBe(1);
  const { rows } = await stack.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM jobs WHERE owner_id = $1 AND idempotency_key = $2',
    [TEST_OWNER, key],
  );
  expect(rows[0]!.n).toBe(2);
});
