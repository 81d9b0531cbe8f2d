import { jobWorkflowId } from '../src/domain/workflowId';
import { Random } from '../tools/chaos/random';
import { holdRowsInTrigger, holdTransaction } from './support/barriers';
import { OPERATOR, TEST_OWNER } from './support/identities';
import { createJob, freshKey, operator, readJob, untilJob, type JobView } from './support/jobs';
import { waitingOrSettled } from './support/lockWaits';
import { eventually } from './support/polling';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';

/**
 * Keys never expire, except by an operator's audited release of an ended job's key: the next
 * create with the same (owner, key) is then a new job of the key's next generation, with a
 * workflow id of its own, linked both ways to the job it supersedes.
 */
// Owner limits off: the races here hold every create at the insert of the next generation at
// once, which the owner's open-jobs lock (taken before the insert) would serialize.
const stack = useTestStack({
  env: { ONEJOB_OWNER_MAX_OPEN_JOBS: 'off', ONEJOB_OWNER_CREATES_PER_SECOND: 'off' },
});

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

/** One create of a round: what it answered, and when it was sent and answered. */
interface Timed {
  status: number;
  job: Released;
  sentAt: number;
  answeredAt: number;
}

async function timedCreate(key: string): Promise<Timed> {
  const sentAt = performance.now();
  const answer = await post(key, summary('Raced around its release.'));
  const job = (await answer.json()) as Released;
  return { status: answer.status, job, sentAt, answeredAt: performance.now() };
}

/** What a schedule did: the creates it made and the moments its release was sent and answered. */
interface RoundRun {
  creates: Timed[];
  release: { sentAt: number; answeredAt: number };
}

async function timedRelease(id: string): Promise<RoundRun['release']> {
  const sentAt = performance.now();
  const answer = await release(id);
  expect(answer.status).toBe(200);
  return { sentAt, answeredAt: performance.now() };
}

/** `count` creates of the same intent under `key`, sent at once. */
function createsOf(key: string, count: number): Array<Promise<Timed>> {
  return Array.from({ length: count }, () => timedCreate(key));
}

const CREATES = 6;

/**
 * A barrier just before a create inserts a key's next generation: the INSERT of any job of a
 * generation above 1 waits in a trigger, before it has written anything, until `letGo()`.
 */
const holdNextGenerationInserts = () =>
  holdRowsInTrigger(stack, 'test_hold_next_generation', 'INSERT ON jobs', 'NEW.key_generation > 1');

/** How a round's release and creates meet; each returns what happened, in order of time. */
const schedules: Array<[name: string, run: (key: string, ended: JobView) => Promise<RoundRun>]> = [
  [
    'the release commits, then the creates come at once',
    async (key, ended) => {
      const released = await timedRelease(ended.id);
      return { release: released, creates: await Promise.all(createsOf(key, CREATES)) };
    },
  ],
  [
    'the release commits, then every create is held just before it inserts the new generation, and all go on together',
    async (key, ended) => {
      const barrier = await holdNextGenerationInserts();
      try {
        const released = await timedRelease(ended.id);
        const creates = Promise.all(createsOf(key, CREATES));
        // All of them found no live job and chose to insert generation 2: none has yet.
        expect(await waitingOrSettled(stack.pool, 'WITH previous AS', creates, CREATES)).toBe(
          'waiting',
        );
        await barrier.letGo();
        return { release: released, creates: await creates };
      } finally {
        await barrier.remove();
      }
    },
  ],
  [
    'creates come while the release waits for the job row, and more once it has committed',
    async (key, ended) => {
      const barrier = await holdTransaction(
        stack,
        `SELECT 1 FROM jobs WHERE id = '${ended.id}' FOR UPDATE`,
      );
      let held = true;
      let releasing: Promise<RoundRun['release']> | undefined;
      try {
        releasing = timedRelease(ended.id);
        expect(await waitingOrSettled(stack.pool, 'UPDATE jobs', releasing)).toBe('waiting');
        const before = await Promise.all(createsOf(key, CREATES / 2));
        // The key is not released until the release commits: they replay the ended job.
        expect(before.map((c) => [c.status, c.job.id])).toEqual(before.map(() => [200, ended.id]));
        held = false;
        await barrier.release();
        const released = await releasing;
        const after = await Promise.all(createsOf(key, CREATES / 2));
        return { release: released, creates: [...before, ...after] };
      } finally {
        if (held) await barrier.release();
        await releasing?.catch(() => undefined);
      }
    },
  ],
  // The release sent first, among the creates, and last, each send after a seeded gap: the
  // same schedule on every run.
  ...[0, 2, 4, CREATES].map(
    (releaseAt, round): [string, (key: string, ended: JobView) => Promise<RoundRun>] => [
      `the release is sent after ${releaseAt} of ${CREATES} creates, each sent after a gap of 0–15 ms (seed ${round + 1})`,
      async (key, ended) => {
        const random = new Random(round + 1);
        const creates: Array<Promise<Timed>> = [];
        let released: Promise<RoundRun['release']> | undefined;
        for (let slot = 0; slot <= CREATES; slot++) {
          await new Promise((resolve) => setTimeout(resolve, random.int(0, 15)));
          if (slot === releaseAt) released = timedRelease(ended.id);
          else creates.push(timedCreate(key));
        }
        return { release: await released!, creates: await Promise.all(creates) };
      },
    ],
  ),
];

test.each(schedules)(
  'creates racing an operator’s release of their key get the ended job before it and one new job after it, never two; interleaving: %s',
  async (_name, schedule) => {
    const key = freshKey('release-race');
    const ended = await createJob(stack, summary('Raced around its release.'), key);
    await untilJob(stack, ended.id, (j) => j.status === 'succeeded');

    const { release: released, creates } = await schedule(key, ended);
    // Every create is answered with the ended job or with the one new job: never a refusal,
    // never a second new job.
    expect(creates.filter((c) => ![200, 201].includes(c.status))).toEqual([]);
    const newer = new Set(creates.filter((c) => c.job.id !== ended.id).map((c) => c.job.id));
    expect(newer.size).toBeLessThanOrEqual(1);
    // The create that made it answered 201, and only that one.
    expect(creates.filter((c) => c.status === 201).map((c) => c.job.id)).toEqual([...newer]);
    for (const create of creates.filter((c) => c.job.id !== ended.id))
      expect(create.job).toMatchObject({ keyGeneration: 2, supersedes: ended.id });
    // Answered before the release was asked for: the ended job. Asked after it was released:
    // the new job. Between them, either.
    for (const create of creates) {
      if (create.answeredAt < released.sentAt) expect(create.job.id).toBe(ended.id);
      if (create.sentAt > released.answeredAt) expect(create.job.id).not.toBe(ended.id);
    }

    // Once the dust settles, the key names one new job, linked both ways, and nothing else.
    const last = await post(key, summary('Raced around its release.'));
    const current = (await last.json()) as Released;
    expect(last.status).toBe(newer.size === 0 ? 201 : 200);
    if (newer.size > 0) expect(newer).toEqual(new Set([current.id]));
    const { rows } = await stack.pool.query(
      `SELECT id, key_generation, key_release IS NOT NULL AS released, supersedes, superseded_by
         FROM jobs WHERE owner_id = $1 AND idempotency_key = $2 ORDER BY key_generation`,
      [TEST_OWNER, key],
    );
    expect(rows).toEqual([
      {
        id: ended.id,
        key_generation: 1,
        released: true,
        supersedes: null,
        superseded_by: current.id,
      },
      {
        id: current.id,
        key_generation: 2,
        released: false,
        supersedes: ended.id,
        superseded_by: null,
      },
    ]);
  },
);
