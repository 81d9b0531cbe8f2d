import { OTHER_OWNER, OTHER_TOKEN } from '../support/identities';
import { freshKey, type JobView } from '../support/jobs';
import { eventually } from '../support/polling';
import { chatProvider } from '../support/providers';
import { useTestStack } from '../support/stack';
import { untilWorkflowClosed } from '../support/temporal';

/** What the Temporal Web UI filters on: every job workflow's JobOwner, JobType, JobStatus and AttemptCount. */
const stack = useTestStack({
  providers: (url) => [
    chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 20_000 }),
    chatProvider(url, 'chat-backup', 'sim-backup', { timeoutMs: 20_000 }),
  ],
  certify: [['chat-backup', 'summarize']],
});

test('after a failover, the job workflow’s search attributes name its owner and type, its status, and both attempts', async () => {
  // The primary refuses definitively; the certified fallback succeeds: two attempts.
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'fail_before', status: 400 },
  });
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': freshKey('search-attributes') },
    body: {
      type: 'summarize',
      input: { text: 'Two attempts. One job.' },
      providers: ['chat', 'chat-backup'],
    },
    token: OTHER_TOKEN,
  });
  expect(created.status).toBe(201);
  const job = (await created.json()) as JobView;
  const done = await eventually(
    async () =>
      (await (
        await stack.request('GET', `/v1/jobs/${job.id}`, { token: OTHER_TOKEN })
      ).json()) as JobView,
    (j) => j.status === 'succeeded' || j.status === 'failed',
  );
  expect(done.attempts.map((a) => a.state)).toEqual(['failed', 'succeeded']);
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');

  const described = await stack.temporal.workflow.getHandle(job.workflowId).describe();
  const attributes = Object.fromEntries(
    described.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]),
  );
  expect(attributes).toMatchObject({
    JobOwner: OTHER_OWNER,
    JobType: 'summarize',
    JobStatus: 'succeeded',
    AttemptCount: 2,
  });
});
