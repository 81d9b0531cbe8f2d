import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serviceConfig } from '../src/config';
import type { ProviderConfig } from '../src/providers/provider';
import { isInternalAddress } from '../src/service/webhookTargets';
import { TEST_SECRET_KEYS } from './support/identities';
import { createJob, summarizeBody, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { useTestStack } from './support/stack';

/**
 * Where webhooks may go: every special-purpose range of IANA's registries that is no place for
 * a receiver is internal; an operator lets chosen internal hosts and ranges through by name or
 * CIDR (ONEJOB_WEBHOOK_ALLOWED_TARGETS) while the rest stays refused; a try to an internal
 * receiver tells its owner only the status (no port scanner); and a URL the service cannot use
 * is a 400 at registration, never a 500.
 */
const providers = (url: string): ProviderConfig[] => [chatProvider(url, 'chat', 'sim-steady')];
const ALLOWED = '127.0.0.1/32,localhost';
const stack = useTestStack({
  providers,
  env: {
    ONEJOB_WEBHOOK_INTERNAL_TARGETS: 'deny',
    ONEJOB_WEBHOOK_ALLOWED_TARGETS: ALLOWED,
    ONEJOB_WEBHOOK_FIRST_RETRY_MS: '200',
    ONEJOB_WEBHOOK_MAX_RETRY_INTERVAL_MS: '1000',
    ONEJOB_WEBHOOK_BREAKER_FAILURES: '1000',
  },
});

/** A receiver on loopback that answers each status queued (with a text), then 204. */
const receiver = {
  server: undefined as Server | undefined,
  port: 0,
  answers: [] as Array<[number, string]>,
  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  },
  async up(): Promise<void> {
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const [status, text] = this.answers.shift() ?? [204, ''];
        response.writeHead(status).end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  },
  /** Stops listening: tries meet a refused connection. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  },
};
beforeAll(() => receiver.up());
afterAll(() => receiver.down());

const register = (url: string) => stack.request('POST', '/v1/webhooks', { body: { url } });
const registered: string[] = [];
afterEach(async () => {
  for (const id of registered.splice(0)) await stack.request('DELETE', `/v1/webhooks/${id}`);
});

test('every special-purpose range that is no place for a receiver is internal, to its first and last address; the addresses either side of it are not', () => {
  const internal = [
    // IPv4 documentation (TEST-NET-1, -2, -3), 6to4 relay anycast, reserved and broadcast.
    '192.0.2.0',
    '192.0.2.255',
    '198.51.100.0',
    '198.51.100.255',
    '203.0.113.0',
    '203.0.113.255',
    '192.88.99.0',
    '192.88.99.255',
    '240.0.0.0',
    '255.255.255.254',
    '255.255.255.255',
    // IPv6: discard-only and the dummy prefix, IETF protocol assignments (Teredo, benchmarking,
    // ORCHIDv2), documentation (both), SRv6 SIDs, and whatever is outside global unicast.
    '100::',
    '100::ffff:ffff:ffff:ffff',
    '100:0:0:1::',
    '2001::',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:2::1',
    '2001:20::1',
    '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:db8::',
    '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
    '3fff::',
    '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff',
    '5f00::1',
    '1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '4000::1',
    // SIIT's IPv4-translated addresses (::ffff:0:0:0/96) carry the IPv4 host they reach.
    '::ffff:0:7f00:1',
    '::ffff:0:a9fe:a9fe',
    // Local-use NAT64 is refused whatever it carries; NAT64 outside its /96 is no address.
    '64:ff9b:1::808:808',
    '64:ff9b::1:0:0:808:808',
    // A zone id changes nothing.
    'fe80::1%eth0',
  ];
  const external = [
    '192.0.1.255',
    '192.0.3.0',
    '198.51.99.255',
    '198.51.101.0',
    '203.0.112.255',
    '203.0.114.0',
    '192.88.98.255',
    '192.88.100.0',
    '223.255.255.255',
    '2000::',
    '2001:200::',
    '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:db9::',
    '3ffe:ffff::',
    '3fff:1000::',
    '3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '::ffff:0:808:808',
    '2a00:1450:4001::1',
  ];
  expect(internal.filter((address) => !isInternalAddress(address))).toEqual([]);
  expect(external.filter((address) => isInternalAddress(address))).toEqual([]);
});

test('ONEJOB_WEBHOOK_ALLOWED_TARGETS is checked at boot: each bad entry, and a list beside ONEJOB_WEBHOOK_INTERNAL_TARGETS=allow, is a one-line error naming it', () => {
  const env = {
    DATABASE_URL: 'postgres://x@localhost/x',
    ONEJOB_SECRET_KEYS: TEST_SECRET_KEYS,
    ONEJOB_WEBHOOK_INTERNAL_TARGETS: 'deny',
  };
  const allowed = (list: string) =>
    serviceConfig({ ...env, ONEJOB_WEBHOOK_ALLOWED_TARGETS: list }).allowedWebhookTargets;
  expect(allowed('10.0.0.0/8, fd00::/8 ,Hooks.Internal,192.168.1.7,::1')).toEqual({
    names: ['hooks.internal'],
    ranges: ['10.0.0.0/8', 'fd00::/8', '192.168.1.7/32', '::1/128'],
  });
  expect(allowed('')).toEqual({ names: [], ranges: [] });
  for (const [list, why] of [
    ['10.0.0.0/33', /"10\.0\.0\.0\/33"/],
    ['fd00::/129', /"fd00::\/129"/],
    ['10.0.0.0/', /"10\.0\.0\.0\/"/],
    ['hooks.internal:8443', /"hooks\.internal:8443"/],
    ['https://hooks.internal', /"https:\/\/hooks\.internal"/],
    ['10.0.0.0/8,,fd00::/8', /an empty entry/],
    ['hooks..internal', /"hooks\.\.internal"/],
    ['*.internal', /"\*\.internal"/],
  ] as const) {
    const thrown = (() => {
      try {
        allowed(list);
      } catch (error) {
        return (error as Error).message;
      }
      return undefined;
    })();
    expect([list, thrown]).toEqual([list, expect.stringMatching(why)]);
    expect(thrown).toMatch(/^ONEJOB_WEBHOOK_ALLOWED_TARGETS/);
    expect(thrown).not.toContain('\n');
  }
  expect(() =>
    serviceConfig({
      ...env,
      ONEJOB_WEBHOOK_INTERNAL_TARGETS: 'allow',
      ONEJOB_WEBHOOK_ALLOWED_TARGETS: '10.0.0.0/8',
    }),
  ).toThrow(/^ONEJOB_WEBHOOK_ALLOWED_TARGETS .*ONEJOB_WEBHOOK_INTERNAL_TARGETS=allow[^\n]*$/);
  // Set alone, the list is what is allowed: the rest of the internal networks is refused.
  expect(
    serviceConfig({
      DATABASE_URL: env.DATABASE_URL,
      ONEJOB_SECRET_KEYS: TEST_SECRET_KEYS,
      ONEJOB_DEV_STACK: '1',
      ONEJOB_WEBHOOK_ALLOWED_TARGETS: '10.0.0.0/8',
    }).allowInternalWebhookTargets,
  ).toBe(false);
});

test('a URL the service cannot or should not use is a 400 problem at registration, never a 500: zone ids, credentials, bad ports, over-long or malformed names, trailing dots, internal addresses in every spelling', async () => {
  const longName = `${['a', 'b', 'c', 'd'].map((c) => c.repeat(63)).join('.')}.example`;
  const refused: Array<[url: string, why: RegExp]> = [
    ['https://[fe80::1%25eth0]/', /not an http or https URL this service can call/],
    ['https://user:pass@hooks.example/', /user name or password/],
    ['https://user@hooks.example/', /user name or password/],
    ['https://:pass@hooks.example/', /user name or password/],
    ['https://hooks.example:0/', /port/],
    ['https://hooks.example:65536/', /not an http or https URL this service can call/],
    [`https://${longName}/`, /253/],
    [`https://${'a'.repeat(64)}.example/`, /63/],
    ['https://hooks.example./', /trailing dot/],
    ['https://localhost./', /trailing dot/],
    ['https://xn--zz.example/', /not an http or https URL this service can call/],
    ['https://a..example/', /host name/],
    ['https://./', /host name/],
    ['https://-hooks.example/', /host name/],
    ['https://hooks!.example/', /host name/],
    // What the URL parser would quietly drop or rewrite, and the database refuses.
    ['https://hooks.example/a\u0000b', /spaces or control characters/],
    ['https://hooks.example/a\u007fb', /spaces or control characters/],
    ['https://hooks.example/a b', /spaces or control characters/],
    ['https:\\\\hooks.example\\in', /not an http or https URL this service can call/],
    ['https:hooks.example/in', /not an http or https URL this service can call/],
    [`https://hooks.example/${'ü'.repeat(400)}`, /2000 characters/],
    // Internal addresses however written (127.0.0.1 alone is allowed here).
    ['https://[::ffff:127.0.0.2]/', /internal address/],
    ['https://[::ffff:0:a9fe:a9fe]/', /internal address/],
    ['https://0x7f.2/', /internal address/],
    ['https://2130706434/', /internal address/],
    ['https://[64:ff9b::a9fe:a9fe]/', /internal address/],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /internal address/],
    ['https://192.0.2.1/', /internal address/],
    ['https://[2001:db8::1]/', /internal address/],
    ['https://255.255.255.255/', /internal address/],
    ['https://[100::1]/', /internal address/],
  ];
  // Every refusal collected first: the list of the wrong answers says all that is wrong at once.
  const wrong: Array<[string, number, string]> = [];
  for (const [url, why] of refused) {
    const answer = await register(url);
    const text = await answer.text();
    if (answer.status === 201) registered.push((JSON.parse(text) as { id: string }).id);
    const problem = /^application\/problem\+json/.test(answer.headers.get('content-type') ?? '');
    // The detail, or a field's message where the body's schema refused the URL.
    if (answer.status !== 400 || !problem || !why.test(text))
      wrong.push([url, answer.status, text.slice(0, 300)]);
  }
  expect(wrong).toEqual([]);
  // What is well-formed stays welcome, kept as it is called: an IDN as its punycode, the
  // scheme and host in lower case, no blanks around it, the highest port.
  for (const [url, kept] of [
    ['https://bücher.example/hook', 'https://xn--bcher-kva.example/hook'],
    ['https://xn--bcher-kva.example/hook', 'https://xn--bcher-kva.example/hook'],
    ['HTTPS://Hooks.Example/In', 'https://hooks.example/In'],
    [' https://hooks.example/in ', 'https://hooks.example/in'],
    ['https://hooks.example:65535/', 'https://hooks.example:65535/'],
  ] as const) {
    const answer = await register(url);
    const text = await answer.text();
    expect([url, answer.status, text]).toEqual([url, 201, expect.stringContaining('"id"')]);
    const endpoint = JSON.parse(text) as { id: string; url: string };
    registered.push(endpoint.id);
    expect([url, endpoint.url]).toEqual([url, kept]);
  }
});

test('ONEJOB_WEBHOOK_ALLOWED_TARGETS lets the listed internal hosts and ranges through at registration, and every other internal address stays refused', async () => {
  const port = new URL(receiver.url).port;
  for (const url of [receiver.url, `http://localhost:${port}/hook`]) {
    const answer = await register(url);
    expect([url, answer.status]).toEqual([url, 201]);
    registered.push(((await answer.json()) as { id: string }).id);
  }
  for (const url of [
    `http://127.0.0.2:${port}/hook`,
    `http://[::1]:${port}/hook`,
    'http://10.0.0.1/hook',
    'http://169.254.169.254/latest',
  ]) {
    const answer = await register(url);
    expect([url, answer.status]).toEqual([url, 400]);
    expect(((await answer.json()) as { detail: string }).detail).toMatch(
      /internal address.*ONEJOB_WEBHOOK_ALLOWED_TARGETS/,
    );
  }
});

interface Try {
  status: number | null;
  error: string | null;
  durationMs: number;
}
const triesOf = async (jobId: string): Promise<{ tries: Try[]; lastError: string | null }> => {
  const answer = await stack.request('GET', `/v1/jobs/${jobId}/webhook-deliveries`);
  const { deliveries } = (await answer.json()) as {
    deliveries: Array<{ tries: Try[]; lastError: string | null }>;
  };
  return deliveries[0] ?? { tries: [], lastError: null };
};

test('a try to an internal receiver the list allows is sent, and its owner reads only the status: never the answer’s text nor why a connection failed (no port scanner); the service log keeps both for operators', async () => {
  const answer = await register(receiver.url);
  expect(answer.status).toBe(201);
  registered.push(((await answer.json()) as { id: string }).id);

  // Answered: a 503 whose text the owner never sees, then delivered.
  receiver.answers.push([503, 'postgres at 10.0.0.7:5432 is down']);
  const answered = await createJob(stack, summarizeBody(['chat']));
  await untilJob(stack, answered.id, (j) => j.status === 'succeeded');
  const delivered = await eventually(
    () => triesOf(answered.id),
    (d) => d.tries.some((t) => t.status !== null && t.status < 300),
    60_000,
  );
  expect(delivered.tries[0]).toMatchObject({ status: 503, error: 'answered 503' });

  // No answer: a refused connection says only that no answer came.
  await receiver.down();
  try {
    const unanswered = await createJob(stack, summarizeBody(['chat']));
    const failed = await eventually(
      () => triesOf(unanswered.id),
      (d) => d.tries.length >= 2,
      60_000,
    );
    for (const tried of failed.tries)
      expect(tried).toEqual(
        expect.objectContaining({
          status: null,
          error: expect.stringMatching(/^no answer \(an internal receiver/),
          durationMs: 0,
        }),
      );
    expect(JSON.stringify(failed)).not.toMatch(/ECONNREFUSED|refused|timeout|within/i);
    // The operator reads why.
    expect(
      stack
        .serviceLogs()
        .some((line) => String(line.msg).includes('ECONNREFUSED') && line.jobId === unanswered.id),
    ).toBe(true);
  } finally {
    await receiver.up();
  }
});
