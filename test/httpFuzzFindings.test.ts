import { signCallback } from '../src/api/signatures';
import { CALLBACK_SECRET, OPERATOR_TOKEN, TEST_TOKEN } from './support/identities';
import { freshKey } from './support/jobs';
import { type RawAnswer, sendRaw } from './support/rawHttp';
import { useTestStack } from './support/stack';

/**
 * What the HTTP fuzzer (test/httpFuzz.test.ts) found, one focused case each: requests Node's
 * HTTP server answered by itself (or not at all) instead of with a problem, and bodies that got
 * past the parser only to break the service behind it with a 500.
 */
const stack = useTestStack();

async function send(head: string[], body = ''): Promise<RawAnswer> {
  const port = Number(new URL(stack.apiUrl).port);
  const bytes = Buffer.from(
    `${[...head, 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`].join('\r\n')}\r\n\r\n${body}`,
    'utf8',
  );
  const outcome = await sendRaw(port, bytes, { headRequest: false, timeoutMs: 10_000 });
  if (outcome.kind === 'no-answer') throw new Error(`no answer: ${outcome.reason}`);
  return outcome.answer;
}

function expectProblem(answer: RawAnswer, status: number, type: string): void {
  expect({ status: answer.status, contentType: answer.headers['content-type'] }).toEqual({
    status,
    contentType: expect.stringMatching(/^application\/problem\+json/),
  });
  expect(JSON.parse(answer.body.toString('utf8'))).toMatchObject({
    type: `/problems/${type}`,
    status,
    title: expect.any(String),
  });
}

const host = () => `Host: ${new URL(stack.apiUrl).host}`;
const owner = `Authorization: Bearer ${TEST_TOKEN}`;
const json = 'Content-Type: application/json';

/** A JSON callback to the payment simulator's route, signed with its real secret. */
const sendSignedCallback = (body: string): Promise<RawAnswer> =>
  send(
    [
      'POST /v1/callbacks/simulator-pay HTTP/1.1',
      host(),
      json,
      `onejob-signature: ${signCallback(CALLBACK_SECRET, body)}`,
    ],
    body,
  );
const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

test('CONNECT is answered with a 404 problem, not a dropped connection', async () => {
  expectProblem(await send(['CONNECT /v1/jobs HTTP/1.1', host(), owner]), 404, 'not-found');
});

test('an Expect other than 100-continue is answered with a 417 problem', async () => {
  expectProblem(
    await send(['GET /v1/jobs HTTP/1.1', host(), owner, 'Expect: something-else']),
    417,
    'expectation-failed',
  );
});

test('an HTTP/1.1 request without Host is answered with a 400 problem; HTTP/1.0 needs none', async () => {
  expectProblem(await send(['GET /v1/jobs HTTP/1.1', owner]), 400, 'malformed-request');
  expect((await send(['GET /v1/jobs HTTP/1.0', owner])).status).toBe(200);
});

test.each([
  ['an input nested 10,000 levels deep', `{"text":"x","deep":${nested(10_000)}}`],
  ['an input whose text holds a lone surrogate', '{"text":"half a pair: \\ud800"}'],
  ['an input whose key is a lone surrogate', '{"text":"x","\\udfff":1}'],
])('%s is refused with 400 malformed-body, not a 500', async (_name, input) => {
  const answer = await send(
    ['POST /v1/jobs HTTP/1.1', host(), owner, json, `Idempotency-Key: ${freshKey('finding')}`],
    `{"type":"summarize","input":${input}}`,
  );
  expectProblem(answer, 400, 'malformed-body');
});

test('a 101-level body is refused and a 100-level one is not, on every JSON route', async () => {
  // The body object is one level; the result nested inside it the others.
  const resolve = (levels: number) =>
    send(
      [
        'POST /v1/operator/attempts/no-such-attempt/resolve HTTP/1.1',
        host(),
        `Authorization: Bearer ${OPERATOR_TOKEN}`,
        json,
      ],
      `{"outcome":"succeeded","reason":"x","result":${nested(levels - 1)}}`,
    );
  expectProblem(await resolve(101), 400, 'malformed-body');
  expectProblem(await resolve(100), 404, 'not-found');
});

test('a signed callback whose output is nested too deep or holds a lone surrogate is a 400', async () => {
  for (const output of [nested(10_000), '{"summary":"\\udc00"}']) {
    const body = `{"attemptId":"no-such-attempt","status":"succeeded","output":${output}}`;
    expectProblem(await sendSignedCallback(body), 400, 'malformed-body');
  }
});

test('a signed callback naming an attempt id with a NUL in it is a 400, not a 500', async () => {
  const body = '{"attemptId":"\\u0000","status":"failed","error":"fuzzed failure"}';
  expectProblem(await sendSignedCallback(body), 400, 'validation-error');
});

test('resolving an attempt id with a NUL in it is a 400, not a 500', async () => {
  const answer = await send(
    [
      'POST /v1/operator/attempts/%00/resolve HTTP/1.1',
      host(),
      `Authorization: Bearer ${OPERATOR_TOKEN}`,
      json,
    ],
    '{"outcome":"failed","reason":"fuzzed"}',
  );
  expectProblem(answer, 400, 'validation-error');
});

test('a signed callback with no body and no Content-Type is a 400, not a 500', async () => {
  const answer = await send([
    'POST /v1/callbacks/simulator-pay HTTP/1.1',
    host(),
    `onejob-signature: ${signCallback(CALLBACK_SECRET, '')}`,
  ]);
  expectProblem(answer, 400, 'malformed-body');
});

test('a path that climbs out of the API docs files (index.html/..) is a 404, not a 500', async () => {
  expectProblem(await send(['GET /docs/static/index.html/.. HTTP/1.1', host()]), 404, 'not-found');
});

test('a create whose input holds a number JSON cannot represent (1e309), under a key that has a job, is a 400, not a 500', async () => {
  const key = freshKey('fuzz-infinity');
  const head = ['POST /v1/jobs HTTP/1.1', host(), owner, json, `Idempotency-Key: ${key}`];
  const made = await send(head, '{"type":"summarize","input":{"text":"A job for the key."}}');
  expect(made.status).toBe(201);
  expectProblem(
    await send(head, '{"type":"summarize","input":{"text":1e309}}'),
    400,
    'invalid-input',
  );
});
