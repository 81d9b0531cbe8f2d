import fc from 'fast-check';
import { signCallback } from '../../src/api/signatures';
import {
  CALLBACK_SECRET,
  LONGEST_OWNER_TOKEN,
  OPERATOR_TOKEN,
  OTHER_TOKEN,
  TEST_TOKEN,
  TRICK_OWNERS,
} from './identities';

/**
 * Arbitrary raw HTTP requests to every route of the API, for the HTTP fuzzer
 * (test/httpFuzz.test.ts): mostly well-aimed requests with one or two things wrong, so that the
 * fuzzer gets past the outer checks into the routes and the service behind them.
 */

/** Header lines in the order they are sent. */
export type HeaderList = Array<[name: string, value: string]>;

/** What exists before the run: a job (and its attempt) of each of two owners. */
export interface FuzzWorld {
  ownerJob: { id: string; attemptId: string };
  otherOwnerJob: { id: string; attemptId: string };
}

/** One request as it goes on the wire; `route` names the route it was aimed at. */
export interface FuzzRequest {
  route: string;
  method: string;
  target: string;
  version: string;
  /** Sent in this order, duplicates and all. */
  headers: HeaderList;
  /** Whether the request carries a Host header (HTTP/1.1 requires one). */
  host: boolean;
  body: Buffer;
}

/** The bytes of a request; Content-Length is always the body's true length. */
export function requestBytes(request: FuzzRequest, port: number): Buffer {
  const lines = [`${request.method} ${request.target} ${request.version}`];
  if (request.host) lines.push(`Host: 127.0.0.1:${port}`);
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  lines.push('Connection: close', `Content-Length: ${request.body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), request.body]);
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');
const utf8 = (text: string) => Buffer.from(text, 'utf8');
const nested = (depth: number, leaf = '1') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

/** Strings that break things: control characters, unicode, separators, numbers as text. */
const oddString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\u202e',
    '日本語',
    '😀',
    '..',
    '../..',
    '%00',
    '__proto__',
    'constructor',
    'toString',
    '1e309',
    'null',
    '\r\n',
  ),
);

/** How deep to nest JSON: a stack-breaking 100,000 levels now and then (they are 200 kB each). */
const nestingDepth = fc.oneof(
  { weight: 9, arbitrary: fc.constantFrom(10, 1_000, 10_000) },
  fc.constant(100_000),
);

/** Any JSON value a field of the wrong type might hold. */
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  oddString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(oddString, fc.integer(), { maxKeys: 3 }),
);

/** A few intents and keys only: valid creates replay or conflict instead of piling up jobs. */
const INTENT_TEXTS = ['Fuzzing is a kind of testing.', 'Short text. Short summary.'];
const intentText = fc.constantFrom(...INTENT_TEXTS);
const poolKey = fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3');

/** Bodies for POST /v1/jobs: valid ones, wrong types, and text PostgreSQL may not store. */
const createBody: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 40, arbitrary: intentText.map((text) => json({ type: 'summarize', input: { text } })) },
  {
    weight: 10,
    arbitrary: intentText.map((text) =>
      json({ type: 'summarize', input: { text }, providers: ['simulator'] }),
    ),
  },
  {
    weight: 10,
    arbitrary: intentText.map((text) =>
      json({ type: 'summarize', input: { text }, mode: 'hedged' }),
    ),
  },
  {
    weight: 10,
    arbitrary: fc
      .record({ type: wrongValue, input: wrongValue, providers: wrongValue, mode: wrongValue })
      .chain((fields) => fc.subarray(Object.keys(fields)).map((keys) => json(pick(fields, keys)))),
  },
  {
    weight: 10,
    arbitrary: fc.record({ text: oddString }).map((input) => json({ type: 'summarize', input })),
  },
  { weight: 10, arbitrary: oddString.map((type) => json({ type, input: { text: 'x' } })) },
  {
    weight: 10,
    arbitrary: fc
      .constantFrom(
        '\\u0000',
        'a\\u0000b',
        '\\ud800',
        '\\udfff\\ud800',
        '\\uffff',
        '\\u001f',
        '\\u2028',
      )
      .map((escape) => utf8(`{"type":"summarize","input":{"text":"text ${escape} end"}}`)),
  },
  {
    weight: 10,
    arbitrary: fc
      .constantFrom('{"summarize":1}', '{"a\\u0000":1}', '{"\\ud800":"x"}', '{"text":"x","":1}')
      .map((input) => utf8(`{"type":"summarize","input":${input}}`)),
  },
  {
    weight: 10,
    arbitrary: fc.constantFrom(
      utf8('{"type":"summarize","input":{"__proto__":{"polluted":true},"text":"x"}}'),
      utf8('{"type":"summarize","input":{"constructor":{"prototype":{"polluted":true}}}}'),
      utf8('{"__proto__":{"type":"summarize"},"input":{"text":"x"}}'),
      utf8('{"type":"summarize","type":"charge","input":{"text":"x"}}'),
      utf8('{"type":"summarize","input":{"text":"x"}} trailing'),
      utf8('\ufeff{"type":"summarize","input":{"text":"x"}}'),
      utf8('{"type":"summarize","input":{"text":1e309}}'),
      utf8('[{"type":"summarize","input":{"text":"x"}}]'),
      utf8('"summarize"'),
      utf8('null'),
      utf8('  '),
      utf8(''),
      Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
      Buffer.concat([
        utf8('{"type":"summarize","input":{"text":"'),
        Buffer.from([0xc3, 0x28, 0xed, 0xa0, 0x80]),
        utf8('"}}'),
      ]),
      Buffer.from(JSON.stringify({ type: 'summarize', input: { text: 'utf16' } }), 'utf16le'),
    ),
  },
  // Deep nesting, where the schema takes anything and where it takes nothing.
  {
    weight: 10,
    arbitrary: nestingDepth.chain((depth) =>
      fc.constantFrom(
        utf8(`{"type":"summarize","input":{"text":"x","deep":${nested(depth)}}}`),
        utf8(`{"type":"summarize","input":{"text":${nested(depth, '"x"')}}}`),
        utf8(`{"type":"summarize","input":${nested(depth)}}`),
        utf8(nested(depth)),
      ),
    ),
  },
  // Huge strings: under the body limit (refused by the input schema) and over it.
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(100_001, 1_000_000, 1_100_000)
      .map((size) => json({ type: 'summarize', input: { text: 'x'.repeat(size) } })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(300, 100_000)
      .map((size) => json({ type: 'x'.repeat(size), input: {} })),
  },
);

function pick(fields: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, fields[key]]));
}

/** An id in a path: the two owners' jobs, ids of nothing, and text that is no id at all. */
function idSegment(ids: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...ids) },
    fc.uuid().map(String),
    fc.constantFrom(
      '00000000-0000-0000-0000-000000000000',
      'not-a-uuid',
      '%00',
      '%2e%2e',
      '..',
      '.',
      '%E0%A4%A',
      '%zz',
      '%',
      '%252e%252e',
      '%2F',
      '__proto__',
      'constructor',
      '日本',
      '%F0%9F%98%80',
    ),
    fc.constantFrom(101, 200, 1_000, 20_000).map((size) => 'x'.repeat(size)),
  );
}

/** The right token for the route mostly; the wrong ones, garbage and none too. */
function authorization(right: string[]): fc.Arbitrary<HeaderList> {
  const bearer = (token: string): [string, string] => ['Authorization', `Bearer ${token}`];
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...right).map((token): HeaderList => [bearer(token)]) },
    fc
      .constantFrom(
        TEST_TOKEN,
        OTHER_TOKEN,
        OPERATOR_TOKEN,
        LONGEST_OWNER_TOKEN,
        ...Object.values(TRICK_OWNERS),
        CALLBACK_SECRET,
        '',
        'token-owner-a-000',
        'token-owner-a-00011',
        'TOKEN-OWNER-A-0001',
      )
      .map((token): HeaderList => [bearer(token)]),
    fc.constantFrom(
      [],
      [['Authorization', '']],
      [['Authorization', 'Bearer']],
      [['Authorization', `bearer ${TEST_TOKEN}`]],
      [['Authorization', `Bearer  ${TEST_TOKEN}  `]],
      [['Authorization', `Bearer\t${TEST_TOKEN}`]],
      [['Authorization', `Bearer ${TEST_TOKEN} extra`]],
      [['Authorization', `Basic ${Buffer.from(`x:${TEST_TOKEN}`).toString('base64')}`]],
      [['Authorization', `Bearer ${TEST_TOKEN}\u0000`]],
      [['Authorization', `Bearer ${TEST_TOKEN}\u0001`]],
      [['Authorization', `Bearer ${TEST_TOKEN}\u007f`]],
      [['Authorization', `Bearer ${TEST_TOKEN}, Bearer ${OTHER_TOKEN}`]],
      [
        ['authorization', `Bearer ${TEST_TOKEN}`],
        ['Authorization', `Bearer ${OTHER_TOKEN}`],
      ],
      [
        ['Authorization', `Bearer ${OTHER_TOKEN}`],
        ['Authorization', `Bearer ${TEST_TOKEN}`],
      ],
      [
        ['Authorization', `Bearer ${OPERATOR_TOKEN}`],
        ['Authorization', `Bearer ${TEST_TOKEN}`],
      ],
      [['Authorization', 'Bearer ' + 'x'.repeat(10_000)]],
    ) as fc.Arbitrary<HeaderList>,
  );
}

const contentType: fc.Arbitrary<HeaderList> = fc.oneof(
  { weight: 8, arbitrary: fc.constant<HeaderList>([['Content-Type', 'application/json']]) },
  fc
    .constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; charset="utf-8"',
      'application/json;;;',
      'APPLICATION/JSON',
      'application/json, text/plain',
      'application/problem+json',
      'application/vnd.api+json',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      '',
      ';',
      'application/json\u0001',
      '*/*',
    )
    .map((value) => [['Content-Type', value]] as HeaderList),
  fc.constant<HeaderList>([]),
  fc.constant([
    ['Content-Type', 'application/json'],
    ['Content-Type', 'text/plain'],
  ] as HeaderList),
);

const idempotencyKey: fc.Arbitrary<HeaderList> = fc.oneof(
  { weight: 6, arbitrary: poolKey.map((key): HeaderList => [['Idempotency-Key', key]]) },
  fc
    .oneof(
      fc.string({ maxLength: 300 }),
      fc.constantFrom('', ' ', 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(10_000), '日本', '😀'),
      fc.constantFrom('key\u0000', 'key\u0001', 'key\u007f', 'a\tb', 'é'),
    )
    .map((key) => [['Idempotency-Key', key]] as HeaderList),
  fc.constant<HeaderList>([]),
  fc.constant([
    ['Idempotency-Key', 'fuzz-key-1'],
    ['Idempotency-Key', 'fuzz-key-2'],
  ] as HeaderList),
);

/** Headers nobody asked for: framing tricks, control characters, sheer size. */
const extraHeader: fc.Arbitrary<HeaderList> = fc.constantFrom(
  [['X-Fuzz', 'a\u0001b']],
  [['X-Fuzz', 'a\u0000b']],
  [['X-Fuzz', 'a\rb']],
  [['X Fuzz', 'space in the name']],
  [['X-Fuzz\u0001', 'control in the name']],
  [['', 'no name']],
  [['X-Fuzz', 'folded\r\n continued']],
  [['X-Fuzz', 'x'.repeat(20_000)]],
  [['X-Fuzz', 'é日本']],
  [['Content-Length', '5']],
  [['Content-Length', '-1']],
  [['Transfer-Encoding', 'chunked']],
  [['Transfer-Encoding', 'gzip']],
  [['Content-Encoding', 'gzip']],
  [['Expect', '100-continue']],
  [['Expect', 'something-else']],
  [['Upgrade', 'websocket']],
  [
    ['Upgrade', 'h2c'],
    ['HTTP2-Settings', 'AAMAAABkAARAAAAAAAIAAAAA'],
  ],
  [['Host', 'evil.example']],
  [['X-Forwarded-Host', 'evil.example']],
  [['X-Forwarded-For', '10.0.0.1']],
  [['Accept', 'application/xml']],
  [['Accept-Encoding', 'gzip, br']],
  [['Range', 'bytes=0-1']],
  [['If-None-Match', '*']],
  [['Cookie', 'a=b']],
  [['onejob-signature', 't=1,v1=00']],
) as fc.Arbitrary<HeaderList>;

const ODD_METHODS = [
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'HEAD',
  'OPTIONS',
  'TRACE',
  'CONNECT',
  'PROPFIND',
  'SEARCH',
  'QUERY',
  'FOO',
  'get',
  'G\u0001T',
  'POST\u0000',
];

const method = (usual: string) =>
  fc.oneof({ weight: 12, arbitrary: fc.constant(usual) }, fc.constantFrom(...ODD_METHODS));

const version = fc.oneof(
  { weight: 30, arbitrary: fc.constant('HTTP/1.1') },
  fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'http/1.1', 'HTTP/0.9', 'HTTP/1.1 extra'),
);

/** Changes to a path that routers and URL decoders trip over. */
const pathMutation: fc.Arbitrary<(path: string) => string> = fc.oneof(
  { weight: 10, arbitrary: fc.constant((path: string) => path) },
  fc.constantFrom(
    (path: string) => `${path}/`,
    (path: string) => path.replace('/v1/', '//v1/'),
    (path: string) => path.replace('/v1/', '/v1/../v1/'),
    (path: string) => path.replace('/v1/', '/v1/./'),
    (path: string) => path.replace('/v1/', '/v1/%2e%2e/v1/'),
    (path: string) => path.replace('/v1/', '/v1/%252e%252e/'),
    (path: string) => `${path}/..`,
    (path: string) => `${path}/%2e%2e/%2e%2e/etc/passwd`,
    (path: string) => `${path}%`,
    (path: string) => `${path}%zz`,
    (path: string) => `${path}%C0%AF`,
    (path: string) => `${path};jsessionid=1`,
    (path: string) => `${path}#fragment`,
    (path: string) => `${path}/日本`,
    (path: string) => `${path}\u0000`,
    (path: string) => `${path}\t`,
    (path: string) => path.toUpperCase(),
    (path: string) => path.replaceAll('/', '%2F'),
    (path: string) => path.replaceAll('/', '\\'),
    (path: string) => `http://127.0.0.1${path}`,
    (path: string) => `//evil.example${path}`,
    () => '*',
    () => '',
    () => `/${'x'.repeat(9_000)}`,
    () => `/${'a/'.repeat(2_000)}`,
  ),
);

/** Every byte of the UTF-8 text percent-encoded (lone surrogates as U+FFFD, as Buffer writes them). */
function percent(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) => `%${byte.toString(16).padStart(2, '0')}`)
    .join('');
}

/** Query strings: the parameters routes take, with values of every kind, and junk. */
const query: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('') },
  fc.constantFrom(
    '?',
    '?&&',
    '?=',
    '?wait=0',
    '?wait=0.5',
    '?wait=-1',
    '?wait=61',
    '?wait=NaN',
    '?wait=1e400',
    '?wait=0x10',
    '?wait=0&wait=1',
    '?limit=1',
    '?limit=100',
    '?limit=0',
    '?limit=1.5',
    '?limit=99999999999999999999',
    '?status=succeeded',
    '?status=running',
    '?status=nope',
    '?status=succeeded&status=failed',
    '?cursor=',
    '?cursor=%FF%FE',
    '?cursor=MTIzLjAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMA',
    '?__proto__[x]=1',
    '?constructor[prototype][x]=1',
    '?limit[]=1',
    '?%zz=1',
    '?a=%E0%A4%A',
    `?cursor=${'A'.repeat(5_000)}`,
    `?x=${'y'.repeat(12_000)}`,
  ),
  fc
    .array(fc.tuple(oddString, oddString), { maxLength: 3 })
    .map(
      (pairs) => `?${pairs.map(([key, value]) => `${percent(key)}=${percent(value)}`).join('&')}`,
    ),
);

/** The onejob-signature header of a callback: right, wrong secret, stale, future, malformed. */
function signature(body: Buffer): fc.Arbitrary<HeaderList> {
  const now = () => Math.floor(Date.now() / 1000);
  const header = (value: string): HeaderList => [['onejob-signature', value]];
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constant(null).map(() => header(signCallback(CALLBACK_SECRET, body))),
    },
    fc.constant(null).map(() => header(signCallback('not-the-secret', body))),
    fc
      .constantFrom(-3_600, -301, 301, 86_400, -now())
      .map((skew) => header(signCallback(CALLBACK_SECRET, body, now() + skew))),
    fc
      .constant(null)
      .map(() => header(signCallback(CALLBACK_SECRET, Buffer.concat([body, utf8(' ')])))),
    fc
      .constantFrom(
        'garbage',
        '',
        't=,v1=',
        't=abc,v1=00',
        `t=1e3,v1=${'0'.repeat(64)}`,
        `t=${Number.MAX_SAFE_INTEGER},v1=${'0'.repeat(64)}`,
        `t=99999999999999999999999,v1=${'0'.repeat(64)}`,
        `v1=${'0'.repeat(64)}`,
        `t=1,v1=${'g'.repeat(64)}`,
        `t=1,v1=${'0'.repeat(64)},v1=${'1'.repeat(64)}`,
        '=,=,=',
      )
      .map(header),
    fc.constant<HeaderList>([]),
    fc.constant(null).map(
      () =>
        [
          ['onejob-signature', signCallback('not-the-secret', body)],
          ['onejob-signature', signCallback(CALLBACK_SECRET, body)],
        ] as HeaderList,
    ),
  );
}

function callbackBody(attemptIds: string[]): fc.Arbitrary<Buffer> {
  const attemptId = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...attemptIds) },
    fc.uuid().map(String),
    oddString,
  );
  return fc.oneof(
    attemptId.map((id) =>
      json({ attemptId: id, status: 'succeeded', output: { summary: 'Short.' } }),
    ),
    attemptId.map((id) => json({ attemptId: id, status: 'failed', error: 'fuzzed failure' })),
    fc
      .record({ attemptId: wrongValue, status: wrongValue, output: wrongValue, error: wrongValue })
      .chain((fields) => fc.subarray(Object.keys(fields)).map((keys) => json(pick(fields, keys)))),
    fc
      .tuple(attemptId, nestingDepth)
      .map(([id, depth]) =>
        utf8(`{"attemptId":${JSON.stringify(id)},"status":"succeeded","output":${nested(depth)}}`),
      ),
    attemptId.map((id) =>
      utf8(
        `{"attemptId":${JSON.stringify(id)},"status":"succeeded","output":{"summary":"\\u0000\\ud800"}}`,
      ),
    ),
    fc.constantFrom(
      utf8('{"attemptId":"x","status":"succeeded","__proto__":{"x":1}}'),
      utf8('not json'),
      utf8(''),
      Buffer.from([0xff, 0xfe, 0xfd]),
    ),
  );
}

/** Bodies for routes that take small JSON objects (attempts, resolve, cancel). */
function smallBody(valid: Array<Record<string, unknown>>): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 30, arbitrary: fc.constantFrom(...valid).map(json) },
    { weight: 10, arbitrary: fc.dictionary(oddString, wrongValue, { maxKeys: 3 }).map(json) },
    { weight: 10, arbitrary: wrongValue.map(json) },
    {
      weight: 10,
      arbitrary: nestingDepth.map((depth) => utf8(`{"reason":"x","result":${nested(depth)}}`)),
    },
    {
      weight: 10,
      arbitrary: fc.constantFrom(
        utf8(''),
        utf8('{'),
        utf8('{"__proto__":{"x":1}}'),
        utf8('{"reason":"\\u0000"}'),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(1_100_000).map((size) => json({ reason: 'x'.repeat(size) })),
    },
  );
}

interface RouteShape {
  route: string;
  method: string;
  path: string;
  headers: HeaderList;
  body: Buffer;
}

/** Every route of the API (owner, operator, callback, meta), with plausible parts. */
function routeShape(world: FuzzWorld): fc.Arbitrary<RouteShape> {
  const jobIds = [world.ownerJob.id, world.otherOwnerJob.id];
  const attemptIds = [world.ownerJob.attemptId, world.otherOwnerJob.attemptId];
  const owners = authorization([TEST_TOKEN, OTHER_TOKEN]);
  const operators = authorization([OPERATOR_TOKEN]);
  const shape = (route: string, method: string, path: string) => ({ route, method, path });
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(owners, idempotencyKey, contentType, createBody)
        .map(([auth, key, type, body]) => ({
          ...shape('POST /v1/jobs', 'POST', '/v1/jobs'),
          headers: [...auth, ...key, ...type],
          body,
        })),
    },
    {
      weight: 3,
      arbitrary: owners.map((auth) => ({
        ...shape('GET /v1/jobs', 'GET', '/v1/jobs'),
        headers: auth,
        body: Buffer.alloc(0),
      })),
    },
    {
      weight: 4,
      arbitrary: fc.tuple(owners, idSegment(jobIds)).map(([auth, id]) => ({
        ...shape('GET /v1/jobs/{id}', 'GET', `/v1/jobs/${id}`),
        headers: auth,
        body: Buffer.alloc(0),
      })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(owners, idSegment(jobIds), contentType, smallBody([{}, { provider: 'simulator' }]))
        .map(([auth, id, type, body]) => ({
          ...shape('POST /v1/jobs/{id}/attempts', 'POST', `/v1/jobs/${id}/attempts`),
          headers: [...auth, ...type],
          body,
        })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          operators,
          idSegment(attemptIds),
          contentType,
          smallBody([
            { outcome: 'failed', reason: 'fuzzed' },
            { outcome: 'succeeded', reason: 'fuzzed', result: { summary: 'Short.' } },
          ]),
        )
        .map(([auth, id, type, body]) => ({
          ...shape(
            'POST /v1/operator/attempts/{id}/resolve',
            'POST',
            `/v1/operator/attempts/${id}/resolve`,
          ),
          headers: [...auth, ...type],
          body,
        })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(operators, idSegment(jobIds), contentType, smallBody([{ reason: 'fuzzed' }]))
        .map(([auth, id, type, body]) => ({
          ...shape('POST /v1/operator/jobs/{id}/cancel', 'POST', `/v1/operator/jobs/${id}/cancel`),
          headers: [...auth, ...type],
          body,
        })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(operators, idSegment(jobIds), contentType, smallBody([{ reason: 'fuzzed' }]))
        .map(([auth, id, type, body]) => ({
          ...shape(
            'POST /v1/operator/jobs/{id}/release-key',
            'POST',
            `/v1/operator/jobs/${id}/release-key`,
          ),
          headers: [...auth, ...type],
          body,
        })),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.oneof(
            { weight: 4, arbitrary: fc.constant('simulator-pay') },
            fc.constantFrom(
              'simulator',
              'nope',
              '__proto__',
              'constructor',
              'hasOwnProperty',
              '%00',
              'x'.repeat(64),
            ),
          ),
          contentType,
          callbackBody(attemptIds),
        )
        .chain(([provider, type, body]) =>
          signature(body).map((signed) => ({
            ...shape('POST /v1/callbacks/{provider}', 'POST', `/v1/callbacks/${provider}`),
            headers: [...signed, ...type],
            body,
          })),
        ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            '/healthz',
            '/metrics',
            '/docs/json',
            '/docs',
            '/docs/static/index.html',
            '/problems/not-found',
            '/problems/__proto__',
            '/problems/constructor',
            '/problems/%E0%A4%A',
            '/',
            '/v1',
            '/v1/',
            '/v2/jobs',
          ),
          fc.oneof(fc.constant<HeaderList>([]), owners),
        )
        .map(([path, auth]) => ({
          ...shape(`GET ${path}`, 'GET', path),
          headers: auth,
          body: Buffer.alloc(0),
        })),
    },
  );
}

/** A raw request aimed at some route, with some of its parts made odd. */
export function fuzzRequest(world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  return routeShape(world).chain((shape) =>
    fc
      .record({
        method: method(shape.method),
        version,
        mutate: pathMutation,
        query,
        extra: fc.array(extraHeader, { maxLength: 2 }).map((lists) => lists.flat()),
        host: fc.oneof({ weight: 30, arbitrary: fc.constant(true) }, fc.constant(false)),
        shuffle: fc.boolean(),
      })
      .map(
        ({ method: verb, version: httpVersion, mutate, query: search, extra, host, shuffle }) => {
          const headers = [...shape.headers, ...extra];
          return {
            route: shape.route,
            method: verb,
            target: `${mutate(shape.path)}${search}`,
            version: httpVersion,
            headers: shuffle ? headers.reverse() : headers,
            host,
            body: shape.body,
          };
        },
      ),
  );
}

/** A short, printable account of a request, for failure messages. */
export function describeRequest(request: FuzzRequest): string {
  const clip = (text: string, max: number) =>
    JSON.stringify(text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text);
  const headers = request.headers.map(([name, value]) => `${clip(name, 40)}: ${clip(value, 80)}`);
  return [
    `${clip(request.method, 20)} ${clip(request.target, 200)} ${clip(request.version, 20)} (aimed at ${request.route})`,
    `host header: ${request.host}`,
    ...headers,
    `body (${request.body.length} bytes): ${clip(request.body.toString('utf8'), 300)}`,
  ].join('\n  ');
}
