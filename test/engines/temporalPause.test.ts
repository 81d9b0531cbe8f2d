import { Worker } from '@temporalio/worker';
import { nothingSwept, sweepJobs } from '../../src/service/sweeper';
import { JobWorkflowPausedError, startJob } from '../../src/temporal/startJob';
import { runCli } from '../support/cli';
import { harness } from '../support/harness';
import { TEST_OWNER } from '../support/identities';
import { chargeBody, createJob, freshKey, operator, readJob, untilJob } from '../support/jobs';
import { eventually } from '../support/polling';
import { effectsFor } from '../support/providerLedger';
import { payProvider, TIMES_OUT_SOON_MS } from '../support/providers';
import { useTestStack } from '../support/stack';
import { setWorkflowPaused, untilWorkflowClosed } from '../support/temporal';

/**
 * Temporal 1.30 and later let an operator pause a workflow (the Web UI's button, the CLI, the
 * WorkflowService's PauseWorkflowExecution): no workflow task runs until it is unpaused, and the
 * server refuses every update meanwhile, which is what every onejob operator action is. A
 * paused job is open and untouched: each action on it is answered 409 `workflow-paused` with
 * nothing done, the sweeper leaves its run alone, a call that answers meanwhile is kept, and
 * after the unpause the same requests go through. On the production engine only: the dev
 * server (the CLI's, 1.29) has no pause.
 */
const stack = useTestStack({
  providers: (url) => [
    payProvider(url, 'pay', { timeoutMs: TIMES_OUT_SOON_MS }),
    payProvider(url, 'pay-backup'),
  ],
  certify: [['pay-backup', 'charge']],
});

const pause = (workflowId: string, reason: string) =>
  setWorkflowPaused(stack, 'pause', workflowId, reason);
const unpause = (workflowId: string, reason: string) =>
  setWorkflowPaused(stack, 'unpause', workflowId, reason);

const runStatus = async (workflowId: string) =>
  (await stack.temporal.workflow.getHandle(workflowId).describe()).status.name;

const sweep = () =>
  sweepJobs(
    { pool: stack.pool, temporal: stack.temporal, taskQueue: stack.taskQueue },
    { olderThanMs: 0 },
  );

test('a paused job workflow takes no operator action (409 workflow-paused, nothing done) and no Temporal-native start, the sweeper leaves it alone, and after the unpause the same verdict settles the job, charged once', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
  const key = freshKey('paused');
  const body = chargeBody(['pay', 'pay-backup']);
  const job = await createJob(stack, body, key);
  await untilJob(stack, job.id, (j) => j.status === 'unknown');
  const { runId } = await stack.temporal.workflow.getHandle(job.workflowId).describe();

  // The operator's own CLI pauses it (Temporal keeps who and why on the event).
  const paused = await runCli(stack, [
    'jobs',
    'pause',
    job.id,
    '--reason',
    'looking into the outage',
    '--operator',
    'alice',
  ]);
  expect(paused).toMatchObject({ code: 0, stderr: '' });
  expect(await runStatus(job.workflowId)).toBe('PAUSED');
  const pausedEvent = (
    await stack.temporal.workflow.getHandle(job.workflowId).fetchHistory()
  ).events?.find((event) => event.workflowExecutionPausedEventAttributes);
  expect(pausedEvent?.workflowExecutionPausedEventAttributes).toMatchObject({
    identity: 'alice',
    reason: 'looking into the outage',
  });
  // Pausing it again is refused in one line, and changes nothing.
  const again = await runCli(stack, ['jobs', 'pause', job.id, '--reason', 'twice']);
  expect(again.code).not.toBe(0);
  expect(again.stderr.trim().split('\n')).toHaveLength(1);
  expect(again.stderr).toMatch(/already paused/);

  const verdict = { outcome: 'failed', reason: 'bank confirms no charge' };
  const refused = await operator(stack, 'POST', `/attempts/${job.id}:1/resolve`, verdict);
  expect(refused.status).toBe(409);
  expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
  const problem = (await refused.json()) as { type: string; detail: string; jobId: string };
  expect(problem.type).toMatch(/\/workflow-paused$/);
  expect(problem).toMatchObject({ jobId: job.id });
  expect(problem.detail).toContain(`onejob jobs unpause ${job.id}`);
  const cancel = await stack.request('POST', `/v1/jobs/${job.id}/cancel`, {
    body: { reason: 'never mind' },
  });
  expect(cancel.status).toBe(409);
  expect(((await cancel.json()) as { type: string }).type).toMatch(/\/workflow-paused$/);

  // The owner's backend starting the same job on Temporal is told so too: admission is an update.
  await expect(
    startJob(stack.temporal, {
      owner: TEST_OWNER,
      idempotencyKey: key,
      taskQueue: stack.taskQueue,
      ...body,
    }),
  ).rejects.toBeInstanceOf(JobWorkflowPausedError);

  // A paused run is open: no new run, no note, no count against the job's restarts.
  expect(await sweep()).toEqual(nothingSwept());
  const meanwhile = await readJob(stack, job.id);
  expect(meanwhile.status).toBe('unknown');
  expect(meanwhile.attempts.map((a) => a.state)).toEqual(['unknown']);
  expect(meanwhile.notes).toEqual([
    expect.objectContaining({ event: 'workflow_paused', reason: 'looking into the outage' }),
  ]);
  const described = await stack.temporal.workflow.getHandle(job.workflowId).describe();
  expect(described).toMatchObject({ runId, status: { name: 'PAUSED' } });

  // Unpaused with Temporal's own call, as the Web UI or the temporal CLI would.
  await unpause(job.workflowId, 'outage understood');
  expect(await runStatus(job.workflowId)).toBe('RUNNING');
  const resolved = await eventually(
    () => operator(stack, 'POST', `/attempts/${job.id}:1/resolve`, verdict),
    (response) => response.status !== 409,
  );
  expect(resolved.status).toBe(200);
  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  expect(done.completedBy).toBe(`${job.id}:2`);
  expect(effectsFor(stack, job.id).map((e) => e.idempotencyKey)).toEqual([`${job.id}:2`]);
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');
  expect((await stack.temporal.workflow.getHandle(job.workflowId).describe()).runId).toBe(runId);
});

test('a call that answers while its workflow is paused is kept: after the unpause the same run takes it up, the job succeeds with that attempt, and its history (with the pause in it) replays', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'paused-call' } });
  const job = await createJob(stack, chargeBody(['pay-backup']));
  await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'running');

  await pause(job.workflowId, 'freeze while we look');
  stack.simulator.openGate('paused-call');
  // The provider charged; whatever the row says meanwhile, the run stays paused until unpaused.
  await eventually(
    () => Promise.resolve(effectsFor(stack, job.id).length),
    (count) => count === 1,
  );
  expect(await runStatus(job.workflowId)).toBe('PAUSED');

  await unpause(job.workflowId, 'carry on');
  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  expect(done.completedBy).toBe(`${job.id}:1`);
  expect(done.attempts.map((a) => a.state)).toEqual(['succeeded']);
  expect(effectsFor(stack, job.id).map((e) => e.idempotencyKey)).toEqual([`${job.id}:1`]);
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');

  const history = await stack.temporal.workflow.getHandle(job.workflowId).fetchHistory();
  const types = (history.events ?? []).map((event) => event.eventType);
  expect(types).toEqual(expect.arrayContaining([58, 59])); // paused, then unpaused
  await Worker.runReplayHistory(
    { workflowBundle: { codePath: harness().workflowBundlePath } },
    history,
    job.workflowId,
  );
});

test('cancel by query passes over a job whose workflow is paused: the run records it refused (workflow-paused), and the next run after it cancels the rest', async () => {
  const since = new Date().toISOString();
  stack.simulator.inject({ route: 'charge', times: 2, fault: { kind: 'hold', gate: 'by-query' } });
  const paused = await createJob(stack, chargeBody(['pay-backup']));
  const other = await createJob(stack, chargeBody(['pay-backup']));
  for (const job of [paused, other])
    await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'running');
  await pause(paused.workflowId, 'kept for the investigation');
  const cancelMany = async (extra: string[]) => {
    const run = await runCli(stack, [
      'jobs',
      'cancel-many',
      '--provider',
      'pay-backup',
      '--created-after',
      since,
      '--limit',
      '1',
      '--apply',
      '--reason',
      'INC-8',
      '--json',
      ...extra,
    ]);
    expect(run).toMatchObject({ code: 0 });
    return JSON.parse(run.stdout) as {
      jobs: Array<{ id: string; result: string; detail: string }>;
      more: boolean;
      next: string | null;
    };
  };
  const first = await cancelMany([]);
  expect(first.jobs).toEqual([
    expect.objectContaining({
      id: paused.id,
      result: 'refused',
      detail: expect.stringMatching(/paused/),
    }),
  ]);
  expect(first).toMatchObject({ more: true, next: paused.id });
  // The refused job is still open and comes first again; the run after it goes past it.
  expect((await cancelMany([])).jobs.map((job) => [job.id, job.result])).toEqual([
    [paused.id, 'refused'],
  ]);
  const after = await cancelMany(['--after', first.next!]);
  expect(after.jobs.map((job) => [job.id, job.result])).toEqual([[other.id, 'cancelled']]);
  expect(after).toMatchObject({ more: false, next: null });

  await unpause(paused.workflowId, 'investigation done');
  stack.simulator.openGate('by-query');
  expect((await untilJob(stack, paused.id, (j) => j.status === 'succeeded')).completedBy).toBe(
    `${paused.id}:1`,
  );
  expect((await readJob(stack, other.id)).status).toBe('cancelled');
});
