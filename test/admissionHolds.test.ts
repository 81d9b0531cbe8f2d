import type { ProviderConfig } from '../src/providers/provider';
import { runCli } from './support/cli';
import {
  chargeBody,
  createJob,
  freshKey,
  readJob,
  succeeded,
  summarizeBody,
  triedOf,
  untilJob,
} from './support/jobs';
import { eventually } from './support/polling';
import { requestsFor } from './support/providerLedger';
import { chatProvider, payProvider } from './support/providers';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';

/**
 * An operator's admission hold (issue 61): new jobs of the held type are accepted, recorded and
 * answered as usual, say they are held, and are admitted only after the release; jobs admitted
 * before the hold, and jobs of other types, go on.
 */
const RECHECK_MS = 500;
const providers = (url: string): ProviderConfig[] => [
  chatProvider(url, 'chat', 'sim-steady'),
  payProvider(url, 'pay'),
];
const stack = useTestStack({
  providers,
  env: { ONEJOB_ADMISSION_HOLD_RECHECK_MS: String(RECHECK_MS) },
});
afterEach(() => stack.simulator.clearFaults());

const cli = (args: string[]) => runCli(stack, args);
const admittedAt = async (jobId: string) =>
  (
    await stack.pool.query<{ admitted_at: Date | null }>(
      'SELECT admitted_at FROM jobs WHERE id = $1',
      [jobId],
    )
  ).rows[0]?.admitted_at;

test('while admission of a job type is held, its new jobs are recorded and answered as usual, say so, and wait; replays answer as always; other types and jobs admitted before go on; the release admits them, and both changes are kept with who and why', async () => {
  // A summary admitted before the hold, its call held at the provider.
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'hold', gate: 'admitted-before' },
  });
  const before = await createJob(stack, summarizeBody(['chat']));
  await eventually(
    () => attemptRows(stack.pool, before.id),
    (rows) => rows[0]?.state === 'running',
  );

  const held = await cli([
    'admissions',
    'hold',
    '--job-type',
    'summarize',
    '--reason',
    'INC-9: the summaries provider is down',
    '--operator',
    'ops-ann',
  ]);
  expect(held.stderr).toBe('');
  expect(held.code).toBe(0);

  // A new summary: answered as usual (201, pending), recorded, held with a note; nothing sent.
  const key = freshKey('held');
  const body = summarizeBody(['chat']);
  const created = await createJob(stack, body, key);
  expect(created.status).toBe('pending');
  const noted = await eventually(
    () => readJob(stack, created.id),
    (job) => job.notes.some((note) => note.event === 'admission_held'),
  );
  expect(noted.notes).toContainEqual(
    expect.objectContaining({
      event: 'admission_held',
      jobType: 'summarize',
      reason: expect.stringMatching(
        /^admission held by an operator since \S+Z: INC-9: the summaries provider is down$/,
      ),
    }),
  );
  // A replay of the held intent answers as always: the same job.
  const replay = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body,
  });
  expect(replay.status).toBe(200);
  expect(((await replay.json()) as { id: string }).id).toBe(created.id);

  // The job admitted before the hold runs to its end; a charge is not held.
  stack.simulator.openGate('admitted-before');
  expect(triedOf(await untilJob(stack, before.id, succeeded))).toEqual([['chat', 'succeeded']]);
  const charge = await createJob(stack, chargeBody(['pay']));
  expect(triedOf(await untilJob(stack, charge.id, succeeded))).toEqual([['pay', 'succeeded']]);

  // Several rechecks later the held job is still not admitted, noted once, and sent nothing.
  await eventually(
    async () =>
      (
        await stack.pool.query<{ passed: boolean }>(
          `SELECT now() > held_at + $1 * interval '1 millisecond' AS passed FROM admission_holds`,
          [4 * RECHECK_MS],
        )
      ).rows[0]?.passed,
    (passed) => passed === true,
  );
  expect(await admittedAt(created.id)).toBeNull();
  const waiting = await readJob(stack, created.id);
  expect(waiting.status).toBe('pending');
  expect(waiting.attempts).toEqual([]);
  expect(waiting.notes.filter((note) => note.event === 'admission_held')).toHaveLength(1);
  expect(requestsFor(stack, created.id, 'chat')).toEqual([]);

  // Shown to operators; a second hold of the same scope is refused in one line.
  const status = JSON.parse((await cli(['admissions', 'status', '--json'])).stdout) as unknown[];
  expect(status).toEqual([expect.objectContaining({ jobType: 'summarize', heldBy: 'ops-ann' })]);
  const metrics = await (await fetch(`${stack.apiUrl}/metrics`)).text();
  expect(metrics).toContain('onejob_admissions_held{job_type="summarize"} 1');
  const again = await cli(['admissions', 'hold', '--job-type', 'summarize', '--reason', 'x']);
  expect(again.code).toBe(1);
  expect(again.stderr.trim()).toMatch(
    /^onejob: admission of summarize is already held, by ops-ann since \S+Z: INC-9/,
  );
  expect((await cli(['admissions', 'hold', '--job-type', 'nope', '--reason', 'x'])).stderr).toMatch(
    /^onejob: no job type nope \(job types: /,
  );

  // Only a change makes or lifts a hold: one written otherwise would say neither who nor why.
  await expect(stack.pool.query(`DELETE FROM admission_holds`)).rejects.toThrow(
    /admission_hold_changes/,
  );

  // Released: the held job is admitted and runs; both changes are kept as written.
  const released = await cli([
    'admissions',
    'release',
    '--job-type',
    'summarize',
    '--reason',
    'provider back',
    '--operator',
    'ops-bo',
  ]);
  expect(released.code).toBe(0);
  expect(triedOf(await untilJob(stack, created.id, succeeded))).toEqual([['chat', 'succeeded']]);
  const { rows: changes } = await stack.pool.query(
    `SELECT job_type, change, changed_by, reason FROM admission_hold_changes ORDER BY id`,
  );
  expect(changes).toEqual([
    {
      job_type: 'summarize',
      change: 'held',
      changed_by: 'ops-ann',
      reason: 'INC-9: the summaries provider is down',
    },
    { job_type: 'summarize', change: 'released', changed_by: 'ops-bo', reason: 'provider back' },
  ]);
  expect((await cli(['admissions', 'release', '--reason', 'x'])).stderr.trim()).toBe(
    'onejob: admission of every job type is not held',
  );
});

test('a held job its owner cancels ends cancelled at once, without waiting for its run, and is never sent after the release', async () => {
  expect((await cli(['admissions', 'hold', '--reason', 'everything waits'])).code).toBe(0);
  const job = await createJob(stack, summarizeBody(['chat']));
  await eventually(
    () => readJob(stack, job.id),
    (j) => j.notes.some((note) => note.event === 'admission_held'),
  );
  const cancelled = await stack.request('POST', `/v1/jobs/${job.id}/cancel`, { body: {} });
  expect(cancelled.status).toBe(200);
  expect((await readJob(stack, job.id)).status).toBe('cancelled');
  expect((await cli(['admissions', 'release', '--reason', 'over'])).code).toBe(0);
  // Its run is let through once the job has ended: it finds it ended, and closes.
  await eventually(
    () => admittedAt(job.id),
    (at) => at !== null,
  );
  expect((await readJob(stack, job.id)).status).toBe('cancelled');
  expect(requestsFor(stack, job.id, 'chat')).toEqual([]);
});
