import { spawn } from 'node:child_process';
import { finishJobWithoutResult } from '../../src/db/endedJobs';
import { jobWorkflowId } from '../../src/domain/workflowId';
import { nothingSwept, sweepJobs } from '../../src/service/sweeper';
import { holdStatement, holdTransaction } from '../support/barriers';
import { harness } from '../support/harness';
import { TEST_OWNER } from '../support/identities';
import { chargeBody, createJob, freshKey, operator, readJob, untilJob } from '../support/jobs';
import { eventually } from '../support/polling';
import { effectsFor } from '../support/providerLedger';
import { chatProvider, payProvider, TIMES_OUT_SOON_MS } from '../support/providers';
import { insertSummaryJob } from '../support/rows';
import { useTestStack } from '../support/stack';
import { untilWorkflowClosed } from '../support/temporal';

/**
 * Operators also act on jobs through Temporal itself (the Web UI, the `temporal` CLI). A cancel
 * there is an operator's cancel; a terminate runs no code at all, so the sweeper finds the open
 * job whose workflow closed and continues it in a new run.
 */
const stack = useTestStack({
  providers: (url) => [
    payProvider(url, 'pay', { timeoutMs: TIMES_OUT_SOON_MS }),
    payProvider(url, 'pay-backup'),
    chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 10_000 }),
    // Its retry waits a minute: a try-again meanwhile is served at once instead.
    chatProvider(url, 'chat-retried', 'sim-steady', {
      retry: { maxAttempts: 3, initialDelayMs: 60_000, maxDelayMs: 60_000 },
    }),
  ],
  certify: [['pay-backup', 'charge']],
});

/** The real `temporal` CLI against the test server. */
function temporalCli(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(harness().temporalCliPath, [
      ...args,
      '--address',
      harness().temporalAddress,
    ]);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

test('a cancel from the temporal CLI is an operator cancel: the running call is abandoned and the job row ends cancelled', async () => {
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hang' } });
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Cancelled from the CLI. The row must say so.' },
    providers: ['chat'],
  });
  await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'running');
  const cancel = await temporalCli(['workflow', 'cancel', '--workflow-id', job.workflowId]);
  expect(cancel).toMatchObject({ code: 0 });
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('CANCELLED');
  const done = await readJob(stack, job.id);
  expect(done.status).toBe('cancelled');
  expect(done.failure).toMatchObject({ code: 'cancelled', operator: 'temporal' });
  // The call was abandoned: it may still be running at the provider, so the attempt is unknown.
  expect(done.attempts.map((a) => a.state)).toEqual(['unknown']);
});

test("a try-again whose attempt is being written when the job is cancelled through Temporal is answered with the attempt or with the job's ending (409, cancelled), never a 503 that says its run is not running", async () => {
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    times: 1,
    fault: { kind: 'fail_before', status: 503 },
  });
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Tried again, then cancelled from the Web UI.' },
    providers: ['chat-retried'],
  });
  await untilJob(stack, job.id, (j) =>
    j.notes.some((n) => (n as { event?: string }).event === 'retry_scheduled'),
  );
  // The try-again's attempt 2 is held as it is written; the cancel comes meanwhile.
  const create = holdStatement('attempts.create', (values) => values[2] === 2);
  try {
    const answer = stack.request('POST', `/v1/jobs/${job.id}/attempts`, {
      body: { provider: 'chat-retried' },
    });
    // The try-again must be the one holding the write (not answered before it got there).
    const first = await Promise.race([
      create.reached.then(() => 'held'),
      answer.then((r) => `answered ${r.status} first`),
    ]);
    expect(first).toBe('held');
    await stack.temporal.workflow.getHandle(job.workflowId).cancel();
    // The cancel waits for the attempt being written, whichever way it went.
    create.release();
    const answered = await answer;
    const body = (await answered.json()) as { type?: string; detail?: string };
    if (answered.status === 202) expect(body).toMatchObject({ attemptId: `${job.id}:2` });
    else
      expect([answered.status, body]).toEqual([
        409,
        expect.objectContaining({
          type: '/problems/job-terminal',
          detail: expect.stringMatching(/cancelled/),
        }),
      ]);
  } finally {
    create.release();
    create.restore();
  }
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('CANCELLED');
  expect((await readJob(stack, job.id)).status).toBe('cancelled');
});

test('a terminated workflow leaves an open job that the sweeper continues in a new run, which an operator then settles', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
  const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
  await untilJob(stack, job.id, (j) => j.status === 'unknown');
  const handle = stack.temporal.workflow.getHandle(job.workflowId);
  const terminatedRun = (await handle.describe()).runId;
  const terminate = await temporalCli([
    'workflow',
    'terminate',
    '--workflow-id',
    job.workflowId,
    '--reason',
    'by mistake',
  ]);
  expect(terminate).toMatchObject({ code: 0 });
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('TERMINATED');
  expect((await readJob(stack, job.id)).status).toBe('unknown');

  const report = await sweepJobs(
    { pool: stack.pool, temporal: stack.temporal, taskQueue: stack.taskQueue },
    { olderThanMs: 0 },
  );
  expect(report.restarted).toBe(1);
  const described = await handle.describe();
  expect(described.status.name).toBe('RUNNING');
  expect(described.runId).not.toBe(terminatedRun);
  const healed = await readJob(stack, job.id);
  expect(healed.notes).toEqual([
    expect.objectContaining({
      event: 'workflow_restarted',
      closedRun: terminatedRun,
      closedAs: 'TERMINATED',
    }),
  ]);

  // The new run knows the unknown attempt: it blocks, and the operator's verdict goes through it.
  await eventually(
    () => handle.query('status') as Promise<{ attempts: Array<{ state: string }> }>,
    (status) => status.attempts[0]?.state === 'unknown',
  );
  const resolved = await operator(stack, 'POST', `/attempts/${job.id}:1/resolve`, {
    outcome: 'failed',
    reason: 'bank confirms no charge',
  });
  expect(resolved.status).toBe(200);
  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  expect(done.completedBy).toBe(`${job.id}:2`);
  expect(effectsFor(stack, job.id).map((e) => e.idempotencyKey)).toEqual([`${job.id}:2`]);
  // A second sweep finds nothing to do.
  expect(
    await sweepJobs(
      { pool: stack.pool, temporal: stack.temporal, taskQueue: stack.taskQueue },
      { olderThanMs: 0 },
    ),
  ).toEqual(nothingSwept());
});

const sweep = () =>
  sweepJobs(
    { pool: stack.pool, temporal: stack.temporal, taskQueue: stack.taskQueue },
    { olderThanMs: 0 },
  );

test("a batch terminate from the temporal CLI (a visibility query) is each job's terminate: every job's new run takes up the charge left in flight, and each is charged once", async () => {
  stack.simulator.inject({
    route: 'charge',
    times: 3,
    fault: { kind: 'hold', gate: 'batch-terminate' },
  });
  const jobs = await Promise.all(
    [1, 2, 3].map(() => createJob(stack, chargeBody(['pay-backup']), freshKey('batch'))),
  );
  for (const job of jobs) await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'running');
  const ids = jobs.map((job) => `"${job.workflowId}"`).join(', ');
  // Visibility lists a run soon after it starts, not at once: the batch waits until it sees them.
  await eventually(
    async () =>
      (
        await temporalCli([
          'workflow',
          'count',
          '--query',
          `WorkflowId IN (${ids}) AND ExecutionStatus = "Running"`,
        ])
      ).output,
    (output) => /Total: 3\b/.test(output),
  );
  const batch = await temporalCli([
    'workflow',
    'terminate',
    '--query',
    `WorkflowId IN (${ids}) AND ExecutionStatus = "Running"`,
    '--reason',
    'incident clean-up by mistake',
    '--yes',
  ]);
  expect(batch).toMatchObject({ code: 0 });
  for (const job of jobs)
    expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('TERMINATED');

  await sweep();
  stack.simulator.openGate('batch-terminate');
  for (const job of jobs) {
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.notes).toContainEqual(
      expect.objectContaining({ event: 'workflow_restarted', closedAs: 'TERMINATED' }),
    );
    expect(effectsFor(stack, job.id).map((e) => e.idempotencyKey)).toEqual([`${job.id}:1`]);
  }
});

test('the sweeper restarts no workflow for a job that ended after it listed the job: the row as it is when the sweeper acts decides', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
  const job = await createJob(stack, chargeBody(['pay']));
  await untilJob(stack, job.id, (j) => j.status === 'unknown');
  const handle = stack.temporal.workflow.getHandle(job.workflowId);
  await handle.terminate('the sweeper is to find it');
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('TERMINATED');

  // The barrier: the job's row is held, so the sweeper, having listed the job open and seen
  // its workflow closed, waits at the row; meanwhile the job ends.
  const barrier = await holdTransaction(
    stack,
    `SELECT id FROM jobs WHERE id = '${job.id}' FOR UPDATE`,
  );
  const sweeping = sweep();
  sweeping.catch(() => undefined);
  await barrier.blocked('UPDATE jobs SET notes');
  await finishJobWithoutResult(barrier.client, job.id, 'cancelled', {
    code: 'cancelled',
    operator: 'test',
    reason: 'ended while the sweeper looked',
  });
  await barrier.release();
  const report = await sweeping;
  expect(report.restarted).toBe(0);
  expect((await handle.describe()).status.name).toBe('TERMINATED');
  const ended = await readJob(stack, job.id);
  expect(ended.status).toBe('cancelled');
  expect(ended.notes).toEqual([]);
});

test('one job the sweeper cannot handle is logged and counted, and the jobs after it are still healed', async () => {
  // Two admitted open jobs whose workflows are gone; Temporal refuses even to describe the
  // first one's (its id is over the engine's length limit), the second is healthy.
  const insert = async (key: string, workflowId: string): Promise<string> => {
    const job = await insertSummaryJob(stack.pool, { key, providers: ['chat'], workflowId });
    await stack.pool.query('UPDATE jobs SET admitted_at = now() WHERE id = $1', [job.id]);
    return job.id;
  };
  const badKey = freshKey('sweep-bad');
  await insert(badKey, `job/${TEST_OWNER}/${badKey}/${'x'.repeat(1_100)}`);
  const goodKey = freshKey('sweep-good');
  const good = await insert(goodKey, jobWorkflowId(TEST_OWNER, goodKey));

  const report = await sweep();
  expect(report).toMatchObject({ restarted: 1, failed: 1 });
  await untilJob(stack, good, (j) => j.status === 'succeeded');
  const metrics = await (await fetch(`${stack.apiUrl}/metrics`)).text();
  expect(metrics).toMatch(/^onejob_sweep_failures_total\{pass="restart"\} [1-9]/m);
});
