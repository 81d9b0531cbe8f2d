import { createJob, freshKey } from './support/jobs';
import { eventually } from './support/polling';
import { useTestStack } from './support/stack';

/**
 * One log stream: the API and the worker write JSON lines only, the Temporal SDK's own lines
 * (the worker's, its workflows' and activities', its core's) among them with the same fields, and
 * every request has an id, the caller's `x-request-id` when it gives a usable one, on each of its
 * log lines and in its answer.
 */
const stack = useTestStack({ workerProcess: true, env: { LOG_LEVEL: 'debug' } });

type Line = Record<string, unknown>;

/** Every line the stack's API and worker processes wrote, each of which must be JSON. */
function lines(): Line[] {
  return stack
    .apiOutput()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Line;
      } catch {
        throw new Error(`a log line that is not JSON: ${line}`);
      }
    });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test.each([
  ['a usable one of its own', 'caller-7f3a:req/42', 'kept'],
  ['one with a space', 'two words', 'replaced'],
  ['one longer than 128 characters', 'x'.repeat(129), 'replaced'],
  ['none', undefined, 'made'],
])(
  'a request that brings %s gets an id (%s), answered in x-request-id and on its log lines',
  async (_what, given, fate) => {
    const response = await stack.request('GET', `/v1/jobs/${crypto.randomUUID()}`, {
      headers: given === undefined ? {} : { 'x-request-id': given },
    });
    expect(response.status).toBe(404);
    const id = response.headers.get('x-request-id');
    if (fate === 'kept') expect(id).toBe(given);
    else expect(id).toMatch(UUID);
    const logged = await eventually(
      async () => lines().filter((line) => line.requestId === id),
      (found) => found.some((line) => line.msg === 'request completed'),
    );
    expect(logged.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['incoming request', 'request completed']),
    );
  },
);

test("the Temporal SDK's lines go through our logger: JSON with our name, its workflow and activity fields, nothing else written", async () => {
  const job = await createJob(
    stack,
    { type: 'summarize', input: { text: 'One stream. Every line is JSON.' } },
    freshKey('log-stream'),
  );
  const done = await stack.request('GET', `/v1/jobs/${job.id}?wait=30`);
  expect(((await done.json()) as { status: string }).status).toBe('succeeded');
  const sdk = await eventually(
    async () => lines().filter((line) => line.component === 'temporal-sdk'),
    (found) => found.some((line) => line.workflowId === job.workflowId && line.activityId),
  );
  expect(sdk.every((line) => line.name === 'onejob-worker')).toBe(true);
  // The worker's own state, and an activity of this job's workflow, as the SDK reports them.
  expect(sdk).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ sdkComponent: 'worker', msg: 'Worker state changed' }),
      expect.objectContaining({
        msg: 'Activity started',
        workflowId: job.workflowId,
        activityType: expect.any(String),
      }),
    ]),
  );
});
