import type { ProviderConfig } from '../src/providers/provider';
import { runCli } from './support/cli';
import { chargeBody, createJob, untilJob, type JobView } from './support/jobs';
import { effectsFor, requestsFor } from './support/providerLedger';
import { anthropicProvider, chatProvider, payProvider } from './support/providers';
import { certifyForSetup, startTestStack, type TestStack } from './support/stack';
import { untilWorkflowClosed } from './support/temporal';

/**
 * A provider's answer is not trusted with our memory or our secrets: its body is read only up
 * to the provider's cap, and whatever it says back (an echoed key, a bearer token) never reaches
 * a stored attempt.
 */

const CAP = 64 * 1024;
const OVER_CAP = 1024 * 1024;

/** Configured keys, one of each shape, and credentials a provider might echo unasked. */
const SECRETS = {
  openaiKey: 'sk-proj-T3stOpenAiKey0123456789abcdef',
  anthropicKey: 'sk-ant-api03-T3stAnthropicKey0123456789',
  plainKey: 'plainkey-7f3a9c2e51b8d4',
  bearer: 'eyJhbGciOi.T3stBearerToken.s1gnature',
  xApiKey: 'xk-live-9a8b7c6d5e4f',
};

const providers = (url: string): ProviderConfig[] => [
  chatProvider(url, 'chat-capped', 'sim-steady', {
    maxResponseBytes: CAP,
    // Short, so that a reader that waits for the endless body gives up quickly.
    lateResultTimeoutMs: 5_000,
  }),
  chatProvider(url, 'chat-backup', 'sim-backup', { timeoutMs: 10_000 }),
  // Without a status lookup: nothing but an operator or a callback may settle it.
  payProvider(url, 'pay-capped', { maxResponseBytes: CAP, statusUrl: undefined }),
  payProvider(url, 'pay-backup'),
  chatProvider(url, 'openai-keyed', 'sim-steady', { apiKeyEnv: 'TEST_OPENAI_KEY' }),
  anthropicProvider(url, 'claude-keyed', 'sim-steady', { apiKeyEnv: 'TEST_ANTHROPIC_KEY' }),
  chatProvider(url, 'plain-keyed', 'sim-backup', { apiKeyEnv: 'TEST_PLAIN_KEY' }),
];

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    providers,
    env: {
      TEST_OPENAI_KEY: SECRETS.openaiKey,
      TEST_ANTHROPIC_KEY: SECRETS.anthropicKey,
      TEST_PLAIN_KEY: SECRETS.plainKey,
    },
  });
  await certifyForSetup(stack, [
    ['chat-backup', 'summarize'],
    ['pay-backup', 'charge'],
  ]);
});
afterEach(() => stack.simulator.clearFaults());
afterAll(async () => {
  await stack?.stop();
});

const summarizeBody = (providers: string[]) => ({
  type: 'summarize',
  input: { text: 'The first sentence is the summary. The second one is not needed.' },
  providers,
});

describe("a provider's answer is read only up to its cap", () => {
  test('an endless answer over the cap from a provider without side effects fails that attempt definitely, and the job fails over', async () => {
    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      fault: { kind: 'oversized_body', bytes: OVER_CAP, endless: true },
    });
    const job = await createJob(stack, summarizeBody(['chat-capped', 'chat-backup']));
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
      ['chat-capped', 'failed'],
      ['chat-backup', 'succeeded'],
    ]);
    expect(done.attempts[0]?.error).toMatchObject({
      code: 'response_too_large',
      certainty: 'definite',
    });
  });

  test('a charge answered 2xx with a body over the cap is unknown, and the fallback never charges', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'oversized_body', bytes: OVER_CAP } });
    const job = await createJob(stack, chargeBody(['pay-capped', 'pay-backup']));
    const blocked = await untilJob(
      stack,
      job.id,
      (j) => j.status === 'unknown' && j.attempts[0]?.state === 'unknown',
    );
    expect(blocked.attempts).toHaveLength(1);
    expect(blocked.attempts[0]?.error).toMatchObject({
      code: 'response_too_large',
      certainty: 'ambiguous',
    });
    // The over-cap body is not kept anywhere.
    expect(JSON.stringify(blocked).length).toBeLessThan(CAP);
    expect(effectsFor(stack, job.id)).toHaveLength(1);
    expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([`${job.id}:1`]);
  });
});

describe('no configured key or credential a provider echoes reaches a stored attempt', () => {
  const planted = [
    `Incorrect API key provided: ${SECRETS.openaiKey}.`,
    `Other keys seen: ${SECRETS.anthropicKey}, ${SECRETS.plainKey}.`,
    `Authorization: Bearer ${SECRETS.bearer}`,
    `x-api-key: ${SECRETS.xApiKey}`,
  ].join(' ');

  async function storedText(job: JobView): Promise<string> {
    const rows = await stack.pool.query<{ row: string }>(
      'SELECT row_to_json(a)::text AS row FROM attempts a WHERE job_id = $1',
      [job.id],
    );
    return [JSON.stringify(job), ...rows.rows.map((r) => r.row)].join('\n');
  }

  test.each([
    ['chat' as const, 'openai-keyed'],
    ['messages' as const, 'claude-keyed'],
    ['chat' as const, 'plain-keyed'],
  ])(
    'a %s error from %s that echoes every kind of key is stored redacted, and shown masked by the operator CLI and the workflow history',
    async (route, provider) => {
      stack.simulator.inject({
        route,
        fault: { kind: 'fail_before', status: 401, message: planted },
      });
      const job = await createJob(stack, summarizeBody([provider]));
      const done = await untilJob(stack, job.id, (j) => j.status === 'failed');
      expect(done.attempts[0]?.error).toMatchObject({
        code: 'http_401',
        message: expect.stringContaining('[redacted]'),
      });
      const stored = await storedText(done);
      const logs = JSON.stringify(stack.serviceLogs());
      for (const secret of Object.values(SECRETS)) {
        expect(stored).not.toContain(secret);
        expect(logs).not.toContain(secret);
      }
      // What people read besides the API: the operator's CLI, in both its forms, and the job's
      // workflow history (the Web UI's and `temporal workflow show`'s view). Each shows the
      // provider's words, masked: the masking reached them, not just the helper that masks.
      const outputs = await readersOutput(done);
      for (const [reader, text] of Object.entries(outputs)) {
        expect({ reader, masked: text.includes('[redacted]') }).toEqual({ reader, masked: true });
        for (const secret of Object.values(SECRETS))
          expect({ reader, leaks: text.includes(secret) }).toEqual({ reader, leaks: false });
      }
    },
  );

  /** The job as the operator's CLI prints it (table and JSON) and its workflow's history. */
  async function readersOutput(job: JobView): Promise<Record<string, string>> {
    const table = await runCli(stack, ['jobs', 'show', job.id]);
    const json = await runCli(stack, ['jobs', 'show', job.id, '--json']);
    expect([table.code, json.code]).toEqual([0, 0]);
    await untilWorkflowClosed(stack, job.workflowId);
    const history = await stack.temporal.workflow.getHandle(job.workflowId).fetchHistory();
    // A payload's data is its JSON text in base64 (bytes, in some forms of the history).
    const historyText = JSON.stringify(history, (key, value: unknown) =>
      value instanceof Uint8Array
        ? Buffer.from(value).toString('utf8')
        : key === 'data' && typeof value === 'string'
          ? Buffer.from(value, 'base64').toString('utf8')
          : value,
    );
    return { 'jobs show': table.stdout, 'jobs show --json': json.stdout, history: historyText };
  }
});
