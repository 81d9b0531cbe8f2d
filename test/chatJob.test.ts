import type { Fault } from '../tools/simulator/faults';
import { createJob, triedOf, untilJob, type JobView } from './support/jobs';
import { requestsFor } from './support/providerLedger';
import { anthropicProvider, chatProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { useTestStack } from './support/stack';

/**
 * The free-text job type, `chat`: a prompt in, the model's plain text out, with no format asked
 * of the provider. Its contract is the model's own stop reason and a non-empty text: an answer
 * cut at the output cap, refused, stopped by a content filter or empty fails its attempt with
 * its own code, and the plan moves on to the fallback, as a failover suite expects.
 */
const stack = useTestStack({
  providers: (url) => [
    chatProvider(url, 'chat', 'sim-steady'),
    chatProvider(url, 'chat-backup', 'sim-backup'),
    anthropicProvider(url, 'claude', 'sim-steady'),
    chatProvider(url, 'chat-verbose', 'sim-verbose'),
    // Silent calls: the attempt times out at once, and its call is cut off soon after.
    chatProvider(url, 'chat-silent', 'sim-hangs', {
      timeoutMs: TIMES_OUT_SOON_MS,
      lateResultTimeoutMs: 2_500,
    }),
  ],
  certify: [['chat-backup', 'chat']],
});

const PROMPT = 'Plain words go in. Plain words come out.';
const chatBody = (providers: string[]) => ({ type: 'chat', input: { prompt: PROMPT }, providers });
const ended = (job: JobView): boolean => ['succeeded', 'failed', 'cancelled'].includes(job.status);

test('a chat job created over HTTP succeeds with the plain text the model wrote; no output format is asked', async () => {
  const job = await createJob(stack, chatBody(['chat']));
  const done = await untilJob(stack, job.id, ended);
  expect(done.status).toBe('succeeded');
  // sim-steady answers with the prompt's first sentence, as prose: not JSON.
  expect(done.result).toEqual({ text: 'Plain words go in.' });
  const [request] = requestsFor(stack, job.id, 'chat');
  const body = request?.body as Record<string, unknown>;
  expect(body).not.toHaveProperty('response_format');
  expect(body.messages).toEqual([{ role: 'user', content: PROMPT }]);
});

test('a chat job on the Anthropic protocol sends no tool and takes the text blocks as the answer', async () => {
  const job = await createJob(stack, {
    type: 'chat',
    input: { prompt: PROMPT, system: 'Answer in one plain sentence.' },
    providers: ['claude'],
  });
  const done = await untilJob(stack, job.id, ended);
  expect(done.status).toBe('succeeded');
  expect(done.result).toEqual({ text: 'Plain words go in.' });
  const [request] = requestsFor(stack, job.id, 'messages');
  const body = request?.body as Record<string, unknown>;
  expect(body).not.toHaveProperty('tools');
  expect(body).not.toHaveProperty('tool_choice');
  expect(body.system).toBe('Answer in one plain sentence.');
});

describe.each([
  ['cut at the output cap', 'runs_long', 'output_truncated'],
  ['a refusal', 'refuses', 'model_refused'],
  ["the provider's content filter", 'content_filter', 'model_refused'],
  ['an empty answer', 'empty_answer', 'no_content'],
] as const)(
  '%s fails the attempt with its own code and the plan falls back',
  (_what, kind, code) => {
    test.each([
      ['OpenAI-compatible', 'chat', 'chat'],
      ['Anthropic', 'claude', 'messages'],
    ] as const)('%s', async (_protocol, primary, route) => {
      stack.simulator.inject({ route, model: 'sim-steady', fault: { kind } as Fault });
      const job = await createJob(stack, chatBody([primary, 'chat-backup']));
      const done = await untilJob(stack, job.id, ended);
      expect(done.status).toBe('succeeded');
      expect(triedOf(done)).toEqual([
        [primary, 'failed'],
        ['chat-backup', 'succeeded'],
      ]);
      expect(done.attempts[0]?.error).toMatchObject({ code });
      // The fallback's answer won: sim-backup answers with the last sentence.
      expect(done.result).toEqual({ text: 'Plain words come out.' });
    });
  },
);

test('a silent provider: the attempt is unknown only until its call is over, then failed, and the plan falls back', async () => {
  const job = await createJob(stack, chatBody(['chat-silent', 'chat-backup']));
  const done = await untilJob(stack, job.id, ended);
  expect(done.status).toBe('succeeded');
  expect(triedOf(done)).toEqual([
    ['chat-silent', 'failed'],
    ['chat-backup', 'succeeded'],
  ]);
  expect(done.attempts[0]?.error).toMatchObject({ certainty: 'ambiguous' });
});

test('certification of the chat job type passes on its golden cases through both protocols', async () => {
  for (const provider of ['chat', 'claude']) {
    const report = await stack.certify(provider, 'chat');
    expect(report).toMatchObject({ provider, jobType: 'chat', passed: true });
    expect(report.cases.length).toBeGreaterThanOrEqual(5);
    expect(report.cases.every((c) => c.passed)).toBe(true);
    // A one-token cap stops a free-text answer too: the server obeys it.
    expect(report.outputCap?.passed).toBe(true);
  }
});

test('certification fails a model whose free-text answers run into the output cap', async () => {
  const report = await stack.certify('chat-verbose', 'chat');
  expect(report.passed).toBe(false);
  expect(report.cases.every((c) => c.code === 'truncated')).toBe(true);
});
