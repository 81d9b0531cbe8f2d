import { beginProviderCall } from '../src/db/attemptCalls';
import { createAttempt, findAttempt } from '../src/db/attempts';
import { sweepJobs } from '../src/service/sweeper';
import { freshKey, readJob } from './support/jobs';
import { attemptRows, insertSummaryJob } from './support/rows';
import { useTestStack } from './support/stack';
import { untilWorkflowClosed } from './support/temporal';

/**
 * An admission that can never succeed says so, at once and for good, and nothing is marked as
 * sent that could not be: a plan naming a provider the worker does not have (removed from its
 * configuration after the job was created, say) is refused with a typed failure and a note.
 */
const stack = useTestStack();

/** A job created while `ghost` was configured, which this worker's configuration no longer has. */
const jobOnRemovedProvider = () =>
  insertSummaryJob(stack.pool, { key: freshKey('removed-provider'), providers: ['ghost'] });

test('a plan naming a provider the worker does not have is refused at admission for good, with a typed failure and a note, and no attempt is written', async () => {
  const job = await jobOnRemovedProvider();
  await sweepJobs(
    { pool: stack.pool, temporal: stack.temporal, taskQueue: stack.taskQueue },
    { olderThanMs: 0 },
  );
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('FAILED');
  const failure = await stack.temporal.workflow
    .getHandle(job.workflowId)
    .result()
    .then(
      () => undefined,
      (error: Error) => error,
    );
  let cause: unknown = failure;
  const types: string[] = [];
  for (; cause instanceof Error; cause = cause.cause)
    types.push((cause as { type?: string }).type ?? cause.name);
  expect(types).toContain('ProviderMissing');

  const seen = await readJob(stack, job.id);
  expect(seen.status).toBe('pending');
  expect(seen.notes).toEqual([
    expect.objectContaining({
      event: 'admission_refused',
      providers: ['ghost'],
      reason: expect.stringMatching(/this worker has no provider ghost/),
    }),
  ]);
  expect(await attemptRows(stack.pool, job.id)).toEqual([]);
});

test('a call on a provider its worker does not have is never marked running: the attempt stays starting, so nothing looks sent', async () => {
  const job = await jobOnRemovedProvider();
  const attempt = await createAttempt(stack.pool, {
    jobId: job.id,
    seq: 1,
    provider: 'ghost',
    exclusive: true,
  });
  const began = await beginProviderCall(stack.pool, attempt.id, { simulator: 10_000 });
  expect(began.state).toBe('starting');
  expect((await findAttempt(stack.pool, attempt.id))?.startedAt).toBeNull();
  // With the provider known, the same step sends it, with its deadline.
  const sent = await beginProviderCall(stack.pool, attempt.id, { ghost: 10_000 });
  expect(sent.state).toBe('running');
  expect(sent.callDeadlineAt!.getTime() - sent.startedAt!.getTime()).toBe(10_000);
});
