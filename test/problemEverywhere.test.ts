import { request as httpRequest } from 'node:http';
import { OPERATOR_TOKEN } from './support/identities';
import { createJob, untilJob } from './support/jobs';
import { useTestStack } from './support/stack';

/**
 * Every error path of the API answers RFC 9457 application/problem+json with one of our problem
 * types: the requests Fastify refuses before a route sees them as much as those a route refuses.
 */
const stack = useTestStack();

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/** One request sent byte for byte as given (fetch would normalise the path). */
function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<Answer> {
  const url = new URL(stack.apiUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: String(response.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const owner = { authorization: 'Bearer token-owner-a-0001' };
const json = { ...owner, 'content-type': 'application/json' };
const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const someUuid = '0f8fad5b-d9cb-469f-a165-70867728950e';

const cases: Array<[name: string, send: () => Promise<Answer>, status: number, type: string]> = [
  [
    'a malformed percent-encoded path',
    () => rawRequest('GET', '/v1/jobs/%E0%A4%A', owner),
    400,
    'malformed-request',
  ],
  [
    'a malformed percent-encoded path under the operator routes',
    () =>
      rawRequest('POST', '/v1/operator/jobs/%E0%A4%A/cancel', {
        authorization: `Bearer ${OPERATOR_TOKEN}`,
        'content-type': 'application/json',
      }),
    400,
    'malformed-request',
  ],
  [
    'a path parameter longer than the router takes',
    () => rawRequest('GET', `/v1/jobs/${'x'.repeat(500)}`, owner),
    414,
    'uri-too-long',
  ],
  ['a job id with a NUL in it', () => rawRequest('GET', '/v1/jobs/%00', owner), 404, 'not-found'],
  [
    'a list cursor whose time overflows bigint',
    () => rawRequest('GET', `/v1/jobs?cursor=${base64url(`${'9'.repeat(19)}.${someUuid}`)}`, owner),
    400,
    'invalid-cursor',
  ],
  [
    'a list cursor whose time is beyond what PostgreSQL timestamps hold',
    () => rawRequest('GET', `/v1/jobs?cursor=${base64url(`${'9'.repeat(17)}.${someUuid}`)}`, owner),
    400,
    'invalid-cursor',
  ],
  [
    'a garbled list cursor',
    () => rawRequest('GET', '/v1/jobs?cursor=%FF%FE%00garbage', owner),
    400,
    'invalid-cursor',
  ],
  [
    'a huge list cursor',
    () => rawRequest('GET', `/v1/jobs?cursor=${'A'.repeat(5000)}`, owner),
    400,
    'validation-error',
  ],
  [
    'a malformed percent-encoded query string',
    () => rawRequest('GET', '/v1/jobs?limit=%E0%A4%A', owner),
    400,
    'validation-error',
  ],
  [
    'a query parameter given twice',
    () => rawRequest('GET', '/v1/jobs?status=running&status=failed', owner),
    400,
    'validation-error',
  ],
  ['an unknown route', () => rawRequest('GET', '/v2/nothing', owner), 404, 'not-found'],
  [
    'a method the route does not have',
    () => rawRequest('DELETE', '/v1/jobs', owner),
    404,
    'not-found',
  ],
  [
    'an unsupported media type',
    () =>
      rawRequest(
        'POST',
        '/v1/jobs',
        { ...owner, 'content-type': 'text/plain', 'idempotency-key': 'plain' },
        'hello',
      ),
    415,
    'unsupported-media-type',
  ],
  [
    'an unsupported media type on a callback',
    () => rawRequest('POST', '/v1/callbacks/simulator', { 'content-type': 'text/plain' }, 'hi'),
    415,
    'unsupported-media-type',
  ],
  [
    'a body larger than the limit',
    () =>
      rawRequest(
        'POST',
        '/v1/jobs',
        { ...json, 'idempotency-key': 'large' },
        JSON.stringify({ type: 'summarize', input: { text: 'x'.repeat(2 * 1024 * 1024) } }),
      ),
    413,
    'body-too-large',
  ],
  [
    'a body that is not JSON',
    () => rawRequest('POST', '/v1/jobs', { ...json, 'idempotency-key': 'broken' }, '{"type":'),
    400,
    'malformed-body',
  ],
  [
    'an empty JSON body',
    () => rawRequest('POST', '/v1/jobs', { ...json, 'idempotency-key': 'empty' }, ''),
    400,
    'malformed-body',
  ],
  [
    'a JSON body with a prototype-poisoning key',
    () =>
      rawRequest(
        'POST',
        '/v1/jobs',
        { ...json, 'idempotency-key': 'proto' },
        '{"type":"summarize","input":{"__proto__":{"x":1}}}',
      ),
    400,
    'malformed-body',
  ],
  ['no token', () => rawRequest('GET', '/v1/jobs', {}), 401, 'unauthorized'],
];

test.each(cases)('%s answers problem+json', async (_name, send, status, type) => {
  const answer = await send();
  expect({ status: answer.status, contentType: answer.contentType }).toEqual({
    status,
    contentType: expect.stringMatching(/^application\/problem\+json/),
  });
  const problem = JSON.parse(answer.body) as Record<string, unknown>;
  expect(problem).toMatchObject({ type: `/problems/${type}`, status, title: expect.any(String) });
  // The problem type it names is explained by the API itself.
  expect((await fetch(`${stack.apiUrl}/problems/${type}`)).status).toBe(200);
});

test('a cursor from a real page still pages on after the cursor checks', async () => {
  for (const text of ['One page. Then another.', 'Cursors are opaque. Tests are not.']) {
    const job = await createJob(stack, { type: 'summarize', input: { text } });
    await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  }
  const first = (await (await stack.request('GET', '/v1/jobs?limit=1')).json()) as {
    jobs: Array<{ id: string }>;
    nextCursor: string;
  };
  const second = await stack.request(
    'GET',
    `/v1/jobs?limit=1&cursor=${encodeURIComponent(first.nextCursor)}`,
  );
  expect(second.status).toBe(200);
  const page = (await second.json()) as { jobs: Array<{ id: string }> };
  expect(page.jobs).toHaveLength(1);
  expect(page.jobs[0]!.id).not.toBe(first.jobs[0]!.id);
});
