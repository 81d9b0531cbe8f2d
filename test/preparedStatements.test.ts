import { createAttempt, listAttempts } from '../src/db/attempts';
import { listOwnedJobs } from '../src/db/jobLists';
import { findJobByKey, findOwnedJob, insertJobOrFindExisting } from '../src/db/jobs';
import { createPool, type Pool } from '../src/db/pool';
import { preparedStatement } from '../src/db/statements';
import { requestFingerprint } from '../src/domain/fingerprint';
import { jobWorkflowId } from '../src/domain/workflowId';
import { createTestDatabase } from './support/database';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
// One connection, so every call below runs on the session whose prepared statements we read.
let single: Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  single = createPool(db.url, { max: 1 });
});
afterAll(async () => {
  await single?.end();
  await db?.drop();
});

const intent = {
  type: 'summarize',
  input: { text: 'prepared once' },
  providers: ['p1'],
  mode: 'exclusive' as const,
};

async function createOrReplay(key: string) {
  return insertJobOrFindExisting(single, {
    ownerId: 'owner-prepared',
    idempotencyKey: key,
    requestFingerprint: requestFingerprint({ ...intent, providers: null }),
    intent,
    workflowId: jobWorkflowId('owner-prepared', key),
  });
}

/** Every statement a job's request path runs, as a create, a replay and reads do. */
async function requestPath(key: string): Promise<void> {
  const { job } = await createOrReplay(key);
  expect((await createOrReplay(key)).created).toBe(false);
  await createAttempt(single, { jobId: job.id, seq: 1, provider: 'p1', exclusive: true });
  expect(await findJobByKey(single, 'owner-prepared', key)).toMatchObject({ id: job.id });
  expect(await findOwnedJob(single, 'owner-prepared', job.id)).toMatchObject({ attemptCount: 1 });
  expect(await listAttempts(single, job.id)).toHaveLength(1);
  expect(
    (await listOwnedJobs(single, 'owner-prepared', { limit: 10 })).jobs.length,
  ).toBeGreaterThan(0);
}

async function preparedOnTheConnection(): Promise<string[]> {
  const { rows } = await single.query<{ name: string }>(
    'SELECT name FROM pg_prepared_statements ORDER BY name',
  );
  return rows.map((row) => row.name);
}

test('the statements of the request path are prepared once per connection, not planned on every call', async () => {
  await requestPath('first');
  const afterFirst = await preparedOnTheConnection();
  expect(afterFirst).toEqual(
    expect.arrayContaining([
      'jobs.insert-or-find',
      'jobs.find-by-key',
      'jobs.find-owned',
      'attempts.create',
      'attempts.list',
    ]),
  );
  await requestPath('second');
  // Running them again reuses what the connection holds: nothing new is prepared.
  expect(await preparedOnTheConnection()).toEqual(afterFirst);
});

test('a column added by a later migration breaks no statement a pooled connection has prepared', async () => {
  await requestPath('before-migration');
  // What a rolling upgrade does while older processes keep their connections: a statement
  // prepared with `*` would now fail with "cached plan must not change result type".
  await db.pool.query('ALTER TABLE jobs ADD COLUMN added_later integer');
  await db.pool.query('ALTER TABLE attempts ADD COLUMN added_later integer');
  await requestPath('after-migration');
  await requestPath('before-migration');
});

test('a prepared statement that selects * or repeats a name is refused where it is declared', () => {
  expect(() => preparedStatement('test.star', 'SELECT * FROM jobs')).toThrow(/selects \*/);
  expect(() => preparedStatement('test.alias-star', 'SELECT j.* FROM jobs j')).toThrow(
    /selects \*/,
  );
  expect(() =>
    preparedStatement('test.returning-star', 'UPDATE jobs SET version = 1 RETURNING *'),
  ).toThrow(/selects \*/);
  // count(*) and a multiplication are not column lists.
  preparedStatement(
    'test.count',
    "SELECT count(*), 2 * 3 FROM jobs WHERE created_at > now() - 5 * interval '1 s'",
  );
  expect(() => preparedStatement('test.count', 'SELECT 1')).toThrow(/two prepared statements/);
});
