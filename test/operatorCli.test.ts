import type { ProviderConfig } from '../src/providers/provider';
import { runCli } from './support/cli';
import { OTHER_OWNER, OTHER_TOKEN } from './support/identities';
import { eventually } from './support/polling';
import { chatProvider, payProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { certifyForSetup, startTestStack, type TestStack } from './support/stack';

/** The operator CLI settles and cancels through the same services as the API. */
const providers = (url: string): ProviderConfig[] => [
  // A hung charge is cut off at its window (2 s), and believed over right then (no grace).
  payProvider(url, 'pay', {
    timeoutMs: TIMES_OUT_SOON_MS,
    lateResultTimeoutMs: 2_000,
    notFoundGraceMs: 0,
  }),
  payProvider(url, 'pay-backup'),
  // A hung charge that may still land for a minute.
  payProvider(url, 'pay-long', { timeoutMs: TIMES_OUT_SOON_MS, lateResultTimeoutMs: 60_000 }),
  // Its held answer comes after the attempt timed out.
  chatProvider(url, 'chat', 'sim-steady', { timeoutMs: TIMES_OUT_SOON_MS }),
];

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ providers });
  await certifyForSetup(stack, [['pay-backup', 'charge']]);
});
afterAll(async () => {
  await stack?.stop();
});

const status = async (id: string) =>
  ((await (await stack.request('GET', `/v1/jobs/${id}`)).json()) as { status: string }).status;

async function create(key: string, body: unknown): Promise<string> {
  const response = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body,
  });
  return ((await response.json()) as { id: string }).id;
}

test('find an unknown job, read it, and resolve its attempt from the command line', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
  const id = await create('cli-resolve', {
    type: 'charge',
    input: { amountCents: 500, currency: 'EUR', account: 'acct-cli' },
    providers: ['pay', 'pay-backup'],
  });
  await eventually(
    () => status(id),
    (s) => s === 'unknown',
  );

  const list = await runCli(stack, ['jobs', 'list', '--status', 'unknown', '--json']);
  expect(list.code).toBe(0);
  expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ id, status: 'unknown' })]);

  const show = await runCli(stack, ['jobs', 'show', id]);
  expect(show.stdout).toMatch(new RegExp(`${id}:1\\s+pay\\s+unknown`));
  // The hung call is cut off at its window: from then on an operator's failed applies at once.
  await eventually(
    async () =>
      (
        await stack.pool.query<{ ended: boolean }>(
          'SELECT call_ended_at IS NOT NULL AS ended FROM attempts WHERE id = $1',
          [`${id}:1`],
        )
      ).rows[0]?.ended,
    (ended) => ended === true,
  );

  const refused = await runCli(stack, ['attempts', 'resolve', `${id}:1`, '--reason', 'x']);
  expect(refused.code).toBe(1);
  expect(refused.stderr.trim()).toBe('onejob: say either --failed or --succeeded');

  const resolved = await runCli(stack, [
    'attempts',
    'resolve',
    `${id}:1`,
    '--failed',
    '--reason',
    'bank confirms no charge',
    '--operator',
    'alice',
  ]);
  expect(resolved.stdout.trim()).toBe(`attempt ${id}:1 is failed`);
  await eventually(
    () => status(id),
    (s) => s === 'succeeded',
  );

  const again = await runCli(stack, [
    'attempts',
    'resolve',
    `${id}:1`,
    '--failed',
    '--reason',
    'twice',
  ]);
  expect(again.code).toBe(1);
  // Settled, and the job has ended: one line that says so, and a non-zero exit.
  expect(again.stderr.trim()).toMatch(/^onejob: job [0-9a-f-]{36} is succeeded \(job-terminal\)$/);
});

test("an operator's failed from the command line, while the call may still land, is held and says so", async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
  const id = await create('cli-held', {
    type: 'charge',
    input: { amountCents: 500, currency: 'EUR', account: 'acct-cli-held' },
    providers: ['pay-long'],
  });
  await eventually(
    () => status(id),
    (s) => s === 'unknown',
  );
  const held = await runCli(stack, [
    'attempts',
    'resolve',
    `${id}:1`,
    '--failed',
    '--reason',
    'no charge on the dashboard yet',
  ]);
  expect(held.code).toBe(0);
  expect(held.stdout.trim()).toBe(
    `attempt ${id}:1 is unknown: your failed is held until its call can no longer land, then it settles failed (unless the call answers success first)`,
  );
  expect(await status(id)).toBe('unknown');
  const cancel = await runCli(stack, ['jobs', 'cancel', id, '--reason', 'test over']);
  expect(cancel.code).toBe(0);
});

test('cancel a job from the command line; its late result shows up as a lost race', async () => {
  // The answer is held until the test lets it go: after the cancel, whatever the machine's speed.
  stack.simulator.inject({ route: 'chat', fault: { kind: 'hold', gate: 'cli-cancel' } });
  const id = await create('cli-cancel', {
    type: 'summarize',
    input: { text: 'Cancel me. Then answer late.' },
    providers: ['chat'],
  });
  await eventually(
    () => status(id),
    (s) => s === 'unknown',
  );

  const cancelled = await runCli(stack, ['jobs', 'cancel', id, '--reason', 'customer withdrew']);
  expect(cancelled.stdout.trim()).toBe(`job ${id} is cancelled`);
  stack.simulator.openGate('cli-cancel');
  const races = await eventually(
    async () =>
      JSON.parse(
        (await runCli(stack, ['races', 'list', '--job', id, '--json'])).stdout,
      ) as unknown[],
    (rows) => rows.length === 1,
    15_000,
  );
  expect(races).toEqual([
    expect.objectContaining({ jobId: id, losingAttemptId: `${id}:1`, winningAttemptId: null }),
  ]);
});

test('a provider’s error message reaches the operator’s terminal without its control sequences', async () => {
  // A colour, a window title, an 8-bit CSI screen clear and a carriage return, as a provider might send.
  const hostile = 'quota \u001b[31mexceeded\u001b[0m\u001b]0;pwned\u0007 now\u009b2J\rdone';
  stack.simulator.inject({
    route: 'chat',
    fault: { kind: 'fail_before', status: 400, message: hostile },
  });
  const id = await create('cli-hostile-error', {
    type: 'summarize',
    input: { text: 'Fail with a hostile message. Operators read it.' },
    providers: ['chat'],
  });
  await eventually(
    async () =>
      (
        (await (await stack.request('GET', `/v1/jobs/${id}`)).json()) as {
          attempts?: Array<{ error?: { message?: string } }>;
        }
      ).attempts?.[0]?.error?.message ?? '',
    (message) => message.includes('exceeded'),
  );
  // Anything a terminal acts on: C0 controls but newline and tab, DEL, C1 controls.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
  for (const args of [
    ['jobs', 'show', id],
    ['jobs', 'show', id, '--json'],
  ]) {
    const shown = await runCli(stack, args);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('exceeded');
    expect(shown.stdout).not.toMatch(controls);
    expect(shown.stdout).not.toContain('\\u001b');
  }
});

test("any owner's webhook endpoints from the command line: listed without secrets, disabled, enabled and deleted with a reason, each recorded with the operator's name", async () => {
  const registered = await stack.request('POST', '/v1/webhooks', {
    token: OTHER_TOKEN,
    body: { url: 'https://hooks.example.com/cli', events: ['job.succeeded'] },
  });
  expect(registered.status).toBe(201);
  const { id } = (await registered.json()) as { id: string };

  const listed = await runCli(stack, ['webhooks', 'list', '--owner', OTHER_OWNER]);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toMatch(
    new RegExp(
      `${id}\\s+${OTHER_OWNER}\\s+https://hooks\\.example\\.com/cli\\s+job\\.succeeded\\s+on`,
    ),
  );
  const json = await runCli(stack, ['webhooks', 'list', '--json']);
  expect(JSON.parse(json.stdout)).toEqual(
    expect.arrayContaining([expect.objectContaining({ id, ownerId: OTHER_OWNER })]),
  );
  expect(json.stdout).not.toContain('whsec_');

  const noReason = await runCli(stack, ['webhooks', 'disable', id]);
  expect(noReason.code).toBe(1);
  expect(noReason.stderr.trim()).toBe("error: required option '--reason <text>' not specified");
  const blank = await runCli(stack, ['webhooks', 'disable', id, '--reason', ' ']);
  expect(blank.code).toBe(1);
  expect(blank.stderr.trim()).toMatch(/^onejob: reason: say why.*\(validation-error\)$/);
  const unknown = await runCli(stack, [
    'webhooks',
    'disable',
    '00000000-0000-4000-8000-000000000000',
    '--reason',
    'x',
  ]);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr.trim()).toBe(
    'onejob: no webhook endpoint 00000000-0000-4000-8000-000000000000',
  );

  for (const [action, state] of [
    ['disable', 'disabled by an operator'],
    ['enable', 'on'],
    ['delete', 'deleted'],
  ] as const) {
    const acted = await runCli(stack, [
      'webhooks',
      action,
      id,
      '--reason',
      `${action} for the test`,
      '--operator',
      'bob',
    ]);
    expect(acted.code).toBe(0);
    expect(acted.stdout.trim()).toBe(`webhook endpoint ${id} of ${OTHER_OWNER} is ${state}`);
  }
  const trail = await runCli(stack, ['webhooks', 'audit', '--endpoint', id, '--json']);
  expect(
    (JSON.parse(trail.stdout) as Array<Record<string, string>>).map((r) => [
      r.operator,
      r.action,
      r.ownerId,
      r.reason,
    ]),
  ).toEqual([
    ['bob', 'delete', OTHER_OWNER, 'delete for the test'],
    ['bob', 'enable', OTHER_OWNER, 'enable for the test'],
    ['bob', 'disable', OTHER_OWNER, 'disable for the test'],
  ]);
  const table = await runCli(stack, ['webhooks', 'audit', '--owner', OTHER_OWNER]);
  expect(table.stdout).toMatch(new RegExp(`bob\\s+delete\\s+${id}`));
});
