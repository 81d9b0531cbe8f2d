import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { signCallback } from '../src/api/signatures';
import { startLinkProxy } from '../tools/chaos/linkProxy';
import { postgresAddress, throughPort } from './support/database';
import { ROOT, TEST_OUTPUT } from './support/harness';
import { CALLBACK_SECRET, OPERATOR_TOKEN } from './support/identities';
import { chargeBody, createJob, freshKey, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';

/**
 * The OpenAPI document tells the truth: it is valid OpenAPI, and every real answer of every
 * route, success and problem alike, has a status the document lists for that route, a
 * content type it lists for that status, and a body its schema accepts.
 */
// No hedge while the test works on a hedged job: its attempts are the ones the test asks for.
const stack = useTestStack({ hedgeDelayMs: 600_000 });

interface MediaType {
  schema?: object;
}
interface Operation {
  security?: unknown[];
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  requestBody?: { content?: Record<string, MediaType> };
  responses: Record<string, { content?: Record<string, MediaType> }>;
}
type Document = { paths: Record<string, Record<string, Operation>>; security?: unknown[] };

let document: Document;
const ajv = new Ajv({ strict: false, allErrors: true, discriminator: true });
addFormats(ajv);
const validators = new Map<object, ValidateFunction>();

beforeAll(async () => {
  const response = await fetch(`${stack.apiUrl}/docs/json`);
  document = (await response.json()) as Document;
});

interface Exchange {
  method: string;
  /** The route as the document names it, e.g. /v1/jobs/{id}. */
  route: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Another API process to ask; the stack's by default. */
  base?: string;
}
/** Every answer the test saw, by route: each must fit the document. */
const seen: Array<{
  exchange: Exchange;
  status: number;
  contentType: string;
  retryAfter: string | null;
  body: string;
}> = [];

async function send(exchange: Exchange): Promise<{ status: number; body: string }> {
  const response = await fetch(`${exchange.base ?? stack.apiUrl}${exchange.path}`, {
    method: exchange.method,
    headers: exchange.headers,
    body: exchange.body,
  });
  const body = await response.text();
  seen.push({
    exchange,
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    retryAfter: response.headers.get('retry-after'),
    body,
  });
  return { status: response.status, body };
}

const asOwner = { authorization: 'Bearer token-owner-a-0001' };
const asOperator = { authorization: `Bearer ${OPERATOR_TOKEN}` };
const jsonOf = (headers: Record<string, string>) => ({
  ...headers,
  'content-type': 'application/json',
});

/** Answers whose status was not the one the test provoked (checked with the misfits). */
const surprises: string[] = [];
async function expectStatus(
  answer: Promise<{ status: number; body: string }>,
  status: number,
): Promise<void> {
  const { status: got, body } = await answer;
  if (got !== status) {
    const last = seen[seen.length - 1]!.exchange;
    surprises.push(
      `${last.method} ${last.path}: ${got} instead of ${status} ${body.slice(0, 200)}`,
    );
  }
}

/** Whatever fails to fit the document, one line per answer. */
function misfits(answers = seen): string[] {
  const problems: string[] = [];
  for (const { exchange, status, contentType, body } of answers) {
    const where = `${exchange.method} ${exchange.path} → ${status}`;
    const operation = document.paths[exchange.route]?.[exchange.method.toLowerCase()];
    if (!operation) {
      problems.push(`${where}: ${exchange.method} ${exchange.route} is not in the document`);
      continue;
    }
    const documented =
      operation.responses[String(status)] ??
      operation.responses[`${String(status)[0]}XX`] ??
      operation.responses.default;
    if (!documented) {
      problems.push(
        `${where}: status not documented (${Object.keys(operation.responses).join(', ')})`,
      );
      continue;
    }
    const mediaType = contentType.split(';')[0]!.trim();
    // A response documented without content must come without a body.
    if (!documented.content) {
      if (mediaType || body)
        problems.push(`${where}: a body (${mediaType}) where none is documented`);
      continue;
    }
    const content = documented.content;
    const media = content[mediaType];
    if (!media) {
      problems.push(
        `${where}: content type ${mediaType} not documented (${Object.keys(content).join(', ')})`,
      );
      continue;
    }
    if (!media.schema || !mediaType.includes('json')) continue;
    let validate = validators.get(media.schema);
    if (!validate) {
      validate = ajv.compile(media.schema);
      validators.set(media.schema, validate);
    }
    if (!validate(JSON.parse(body)))
      problems.push(`${where}: body does not fit: ${ajv.errorsText(validate.errors)}`);
  }
  return problems;
}

test('the document is valid OpenAPI', async () => {
  const file = path.join(TEST_OUTPUT, `openapi-${process.pid}.json`);
  await writeFile(file, JSON.stringify(document));
  const cli = path.join(
    ROOT,
    'node_modules',
    '@seriousme',
    'openapi-schema-validator',
    'bin',
    'validate-api-cli.js',
  );
  const { stdout } = await promisify(execFile)(process.execPath, [cli, file]);
  expect(JSON.parse(stdout)).toEqual({ valid: true });
});

test('the document says what the routes require: Idempotency-Key on create, a signature and a body on callbacks, no bearer there', () => {
  const create = document.paths['/v1/jobs']!.post!;
  expect(create.parameters).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ in: 'header', name: 'idempotency-key', required: true }),
    ]),
  );
  const callback = document.paths['/v1/callbacks/{provider}']!.post!;
  expect(callback.security).toEqual([]);
  expect(callback.parameters).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ in: 'header', name: 'onejob-signature', required: true }),
    ]),
  );
  expect(callback.requestBody?.content?.['application/json']?.schema).toEqual(expect.any(Object));
  // Owner and operator routes need the bearer token (the document-wide default).
  expect(document.security).toEqual([{ bearer: [] }]);
  expect(create.security).toBeUndefined();
});

test('every route answers as the document says, successes and problems alike', async () => {
  const summary = JSON.stringify({
    type: 'summarize',
    input: { text: 'Documents drift. Tests pin.' },
  });
  const key = freshKey('openapi');
  const create = (headers: Record<string, string>, body = summary) =>
    send({ method: 'POST', route: '/v1/jobs', path: '/v1/jobs', headers, body });

  // Create: 201, 200, 409, 400 (no key, bad body, not JSON), 401, 413, 415.
  const created = await create(jsonOf({ ...asOwner, 'idempotency-key': key }));
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.body}`);
  const job = JSON.parse(created.body) as { id: string };
  await expectStatus(create(jsonOf({ ...asOwner, 'idempotency-key': key })), 200);
  const other = JSON.stringify({ type: 'summarize', input: { text: 'Another intent entirely.' } });
  await expectStatus(create(jsonOf({ ...asOwner, 'idempotency-key': key }), other), 409);
  await expectStatus(create(jsonOf(asOwner)), 400);
  await expectStatus(create(jsonOf({ ...asOwner, 'idempotency-key': 'x' }), '{"type":1}'), 400);
  await expectStatus(create(jsonOf({ ...asOwner, 'idempotency-key': 'x' }), '{'), 400);
  await expectStatus(create(jsonOf({ 'idempotency-key': 'x' })), 401);
  const huge = JSON.stringify({ type: 'summarize', input: { text: 'x'.repeat(1_100_000) } });
  await expectStatus(create(jsonOf({ ...asOwner, 'idempotency-key': 'x' }), huge), 413);
  await expectStatus(
    create({ ...asOwner, 'idempotency-key': 'x', 'content-type': 'text/plain' }, 'hi'),
    415,
  );
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');

  // Read: 200 (plain and waiting), 404, 400, 401, and a path that does not decode.
  const read = (p: string, headers: Record<string, string> = asOwner) =>
    send({ method: 'GET', route: '/v1/jobs/{id}', path: p, headers });
  await expectStatus(read(`/v1/jobs/${job.id}`), 200);
  await expectStatus(read(`/v1/jobs/${job.id}?wait=1`), 200);
  await expectStatus(read('/v1/jobs/0f8fad5b-d9cb-469f-a165-70867728950e'), 404);
  await expectStatus(read(`/v1/jobs/${job.id}?wait=abc`), 400);
  await expectStatus(read(`/v1/jobs/${job.id}`, {}), 401);
  await expectStatus(read('/v1/jobs/%E0%A4%A'), 400);
  await expectStatus(read(`/v1/jobs/${'x'.repeat(300)}`), 414);

  // List: 200, 400, 401.
  const list = (p: string, headers: Record<string, string> = asOwner) =>
    send({ method: 'GET', route: '/v1/jobs', path: p, headers });
  await expectStatus(list('/v1/jobs?limit=1'), 200);
  await expectStatus(list('/v1/jobs?cursor=nonsense'), 400);
  await expectStatus(list('/v1/jobs', {}), 401);

  // Try again: 409 (the job is over), 404, 400, 401.
  const again = (id: string, headers: Record<string, string>, body = '{}') =>
    send({
      method: 'POST',
      route: '/v1/jobs/{id}/attempts',
      path: `/v1/jobs/${id}/attempts`,
      headers,
      body,
    });
  await expectStatus(again(job.id, jsonOf(asOwner)), 409);
  await expectStatus(again('0f8fad5b-d9cb-469f-a165-70867728950e', jsonOf(asOwner)), 404);
  await expectStatus(again(job.id, jsonOf(asOwner), '{"provider":5}'), 400);
  await expectStatus(again(job.id, jsonOf({})), 401);

  // Try again on a hedged job whose call hangs: 202, a second attempt beside the first.
  stack.simulator.inject({ route: 'chat', times: 2, fault: { kind: 'hang' } });
  const hanging = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Hangs until cancelled.' },
    providers: ['simulator', 'simulator-backup'],
    mode: 'hedged',
  });
  await eventually(
    () => attemptRows(stack.pool, hanging.id),
    (rows) => rows[0]?.state === 'running',
  );
  await expectStatus(again(hanging.id, jsonOf(asOwner), '{"provider":"simulator"}'), 202);
  await eventually(
    () => attemptRows(stack.pool, hanging.id),
    (rows) => rows.length === 2 && rows.every((row) => row.state === 'running'),
  );

  // Operators: cancel a running job (200), then again (409); unknown ids (404); no token (401).
  const cancel = (id: string, headers: Record<string, string>, body = '{"reason":"openapi"}') =>
    send({
      method: 'POST',
      route: '/v1/operator/jobs/{id}/cancel',
      path: `/v1/operator/jobs/${id}/cancel`,
      headers,
      body,
    });
  await expectStatus(cancel(hanging.id, jsonOf(asOperator)), 200);
  await expectStatus(cancel('0f8fad5b-d9cb-469f-a165-70867728950e', jsonOf(asOperator)), 404);
  await expectStatus(cancel(hanging.id, jsonOf(asOperator), '{}'), 400);
  await expectStatus(cancel(hanging.id, jsonOf(asOwner)), 401);
  // Owners cancel their own: 200 (without a body too), then 409; another's or none (404), a
  // bad body (400), no token (401).
  stack.simulator.inject({ route: 'chat', times: 1, fault: { kind: 'hang' } });
  const owned = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Hangs until its owner cancels it.' },
    providers: ['simulator'],
  });
  await eventually(
    () => attemptRows(stack.pool, owned.id),
    (rows) => rows[0]?.state === 'running',
  );
  const ownerCancel = (id: string, headers: Record<string, string>, body?: string) =>
    send({
      method: 'POST',
      route: '/v1/jobs/{id}/cancel',
      path: `/v1/jobs/${id}/cancel`,
      headers,
      ...(body === undefined ? {} : { body }),
    });
  await expectStatus(ownerCancel(owned.id, jsonOf(asOwner), '{"reason":""}'), 400);
  await expectStatus(ownerCancel(owned.id, asOwner), 200);
  await expectStatus(ownerCancel(owned.id, jsonOf(asOwner), '{"reason":"openapi"}'), 409);
  await expectStatus(
    ownerCancel('0f8fad5b-d9cb-469f-a165-70867728950e', jsonOf(asOwner), '{}'),
    404,
  );
  await expectStatus(ownerCancel(owned.id, jsonOf({}), '{}'), 401);
  // Release an ended job's key: 200, then 409 (released already, or an attempt may still take
  // effect); 404, 400, 401.
  await untilJob(stack, hanging.id, (j) => j.status === 'cancelled');
  const releaseKeyOf = (
    id: string,
    headers: Record<string, string>,
    body = '{"reason":"openapi"}',
  ) =>
    send({
      method: 'POST',
      route: '/v1/operator/jobs/{id}/release-key',
      path: `/v1/operator/jobs/${id}/release-key`,
      headers,
      body,
    });
  // The cancelled job's call may still answer: its key stays (409), the ended one's goes.
  await expectStatus(releaseKeyOf(hanging.id, jsonOf(asOperator)), 409);
  await expectStatus(releaseKeyOf(job.id, jsonOf(asOperator)), 200);
  await expectStatus(releaseKeyOf(job.id, jsonOf(asOperator)), 409);
  await expectStatus(releaseKeyOf('0f8fad5b-d9cb-469f-a165-70867728950e', jsonOf(asOperator)), 404);
  await expectStatus(releaseKeyOf(hanging.id, jsonOf(asOperator), '{}'), 400);
  await expectStatus(releaseKeyOf(hanging.id, jsonOf(asOwner)), 401);
  const resolve = (id: string, headers: Record<string, string>, body: string) =>
    send({
      method: 'POST',
      route: '/v1/operator/attempts/{attemptId}/resolve',
      path: `/v1/operator/attempts/${id}/resolve`,
      headers,
      body,
    });
  const failed = '{"outcome":"failed","reason":"openapi"}';
  // Resolve an unknown attempt: 200. The charge's provider answered 2xx "pending", filed under
  // an id of its own: the attempt stays unknown until an operator says what became of it.
  stack.simulator.inject({
    route: 'charge',
    fault: { kind: 'files_under_own_id', answer: 'pending' },
  });
  const pending = await createJob(stack, chargeBody(['simulator-pay']));
  await eventually(
    () => attemptRows(stack.pool, pending.id),
    (rows) => rows[0]?.state === 'unknown',
  );
  await expectStatus(resolve(`${pending.id}:1`, jsonOf(asOperator), failed), 200);
  await expectStatus(resolve(`${job.id}:1`, jsonOf(asOperator), failed), 409);
  await expectStatus(resolve('nothing:1', jsonOf(asOperator), failed), 404);
  await expectStatus(resolve('nothing:1', jsonOf(asOperator), '{"outcome":"maybe"}'), 400);
  await expectStatus(resolve('nothing:1', jsonOf({}), failed), 401);

  // Provider callbacks: signed (200 for an attempt of the provider, 404 for one that is not
  // there, 400 for a bad body), unsigned (401), not JSON (415).
  const callback = (headers: Record<string, string>, body: string) =>
    send({
      method: 'POST',
      route: '/v1/callbacks/{provider}',
      path: '/v1/callbacks/simulator-pay',
      headers,
      body,
    });
  const report = JSON.stringify({ attemptId: 'nothing:1', status: 'failed', error: 'no' });
  const signed = (body: string) => ({
    'content-type': 'application/json',
    'onejob-signature': signCallback(CALLBACK_SECRET, body),
  });
  // A signed report on an attempt of that provider is taken: 200, with the attempt as it is.
  const reported = JSON.stringify({
    attemptId: `${pending.id}:1`,
    status: 'failed',
    error: 'declined',
  });
  await expectStatus(callback(signed(reported), reported), 200);
  await expectStatus(callback(signed(report), report), 404);
  await expectStatus(callback(signed('{"status":"maybe"}'), '{"status":"maybe"}'), 400);
  await expectStatus(callback({ 'content-type': 'application/json' }, report), 401);
  await expectStatus(callback({ 'content-type': 'text/plain' }, report), 415);

  // Webhook endpoints: register (201, 400, 401), list, read (200, 404), enable, rotate (200,
  // 400, 404), a job's deliveries (200, 404), delete (204, 404).
  const hooks = (
    method: string,
    route: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ) => send({ method, route, path, headers, ...(body === undefined ? {} : { body }) });
  const endpointBody = JSON.stringify({ url: 'http://127.0.0.1:9/hooks', events: ['job.failed'] });
  const registered = await hooks(
    'POST',
    '/v1/webhooks',
    '/v1/webhooks',
    jsonOf(asOwner),
    endpointBody,
  );
  if (registered.status !== 201)
    throw new Error(`register: ${registered.status} ${registered.body}`);
  const endpointId = (JSON.parse(registered.body) as { id: string }).id;
  const missingEndpoint = '0f8fad5b-d9cb-469f-a165-70867728950e';
  await expectStatus(
    hooks('POST', '/v1/webhooks', '/v1/webhooks', jsonOf(asOwner), '{"url":"ftp://x"}'),
    400,
  );
  await expectStatus(hooks('POST', '/v1/webhooks', '/v1/webhooks', jsonOf({}), endpointBody), 401);
  await expectStatus(hooks('GET', '/v1/webhooks', '/v1/webhooks', asOwner), 200);
  const oneEndpoint = (id: string) => `/v1/webhooks/${id}`;
  await expectStatus(hooks('GET', '/v1/webhooks/{id}', oneEndpoint(endpointId), asOwner), 200);
  await expectStatus(hooks('GET', '/v1/webhooks/{id}', oneEndpoint(missingEndpoint), asOwner), 404);
  await expectStatus(
    hooks('POST', '/v1/webhooks/{id}/enable', `${oneEndpoint(endpointId)}/enable`, asOwner),
    200,
  );
  await expectStatus(
    hooks('POST', '/v1/webhooks/{id}/enable', `${oneEndpoint(missingEndpoint)}/enable`, asOwner),
    404,
  );
  const rotate = (id: string, body: string) =>
    hooks(
      'POST',
      '/v1/webhooks/{id}/secret-rotations',
      `${oneEndpoint(id)}/secret-rotations`,
      jsonOf(asOwner),
      body,
    );
  await expectStatus(rotate(endpointId, '{"previousSecretExpiresInSeconds":60}'), 200);
  await expectStatus(rotate(endpointId, '{"previousSecretExpiresInSeconds":-1}'), 400);
  await expectStatus(rotate(missingEndpoint, '{}'), 404);
  const deliveriesOf = (id: string) =>
    hooks('GET', '/v1/jobs/{id}/webhook-deliveries', `/v1/jobs/${id}/webhook-deliveries`, asOwner);
  await expectStatus(deliveriesOf(job.id), 200);
  await expectStatus(deliveriesOf(missingEndpoint), 404);
  // Operators on any owner's endpoints: list (200, 400, 401), disable, enable and delete (200,
  // 400, 404), the owner's enable of one an operator disabled (409), the record (200, 400).
  const operatorList = (query: string, headers: Record<string, string> = asOperator) =>
    hooks('GET', '/v1/operator/webhooks', `/v1/operator/webhooks${query}`, headers);
  await expectStatus(operatorList('?limit=1'), 200);
  await expectStatus(operatorList('?cursor=nonsense'), 400);
  await expectStatus(operatorList('', asOwner), 401);
  const operatorAct = (action: string, id: string, body = '{"reason":"openapi"}') =>
    hooks(
      'POST',
      `/v1/operator/webhooks/{id}/${action}`,
      `/v1/operator/webhooks/${id}/${action}`,
      jsonOf(asOperator),
      body,
    );
  await expectStatus(operatorAct('disable', endpointId), 200);
  await expectStatus(operatorAct('disable', endpointId, '{"reason":" "}'), 400);
  await expectStatus(operatorAct('disable', missingEndpoint), 404);
  await expectStatus(
    hooks('POST', '/v1/webhooks/{id}/enable', `${oneEndpoint(endpointId)}/enable`, asOwner),
    409,
  );
  // Redeliveries, by the owner and by operators: sent (202), bad bodies (400), no such endpoint
  // or delivery (404), a disabled endpoint (409).
  const redeliver = (id: string, body: string, operator = false) =>
    hooks(
      'POST',
      `/v1${operator ? '/operator' : ''}/webhooks/{id}/redeliver`,
      `/v1${operator ? '/operator' : ''}/webhooks/${id}/redeliver`,
      jsonOf(operator ? asOperator : asOwner),
      body,
    );
  const since = JSON.stringify({ failedSince: '2026-01-01T00:00:00Z', reason: 'openapi' });
  await expectStatus(redeliver(endpointId, since), 409);
  await expectStatus(redeliver(endpointId, since, true), 409);
  await expectStatus(redeliver(endpointId, '{}'), 400);
  await expectStatus(redeliver(endpointId, '{"failedSince":"2026-01-01T00:00:00Z"}', true), 400);
  await expectStatus(redeliver(missingEndpoint, since), 404);
  await expectStatus(
    redeliver(endpointId, JSON.stringify({ deliveryId: missingEndpoint, reason: 'x' }), true),
    409,
  );
  await expectStatus(operatorAct('enable', endpointId), 200);
  await expectStatus(operatorAct('enable', endpointId, '{}'), 400);
  await expectStatus(operatorAct('enable', missingEndpoint), 404);
  await expectStatus(redeliver(endpointId, since), 202);
  await expectStatus(redeliver(endpointId, since, true), 202);
  await expectStatus(
    redeliver(endpointId, JSON.stringify({ deliveryId: missingEndpoint, reason: 'x' }), true),
    404,
  );
  const doomed = JSON.parse(
    (await hooks('POST', '/v1/webhooks', '/v1/webhooks', jsonOf(asOwner), endpointBody)).body,
  ) as { id: string };
  await expectStatus(operatorAct('delete', doomed.id), 200);
  await expectStatus(operatorAct('delete', doomed.id, '{"reason":""}'), 400);
  await expectStatus(operatorAct('delete', doomed.id), 404);
  const actions = (query: string) =>
    hooks(
      'GET',
      '/v1/operator/webhook-actions',
      `/v1/operator/webhook-actions${query}`,
      asOperator,
    );
  await expectStatus(actions(`?endpoint=${endpointId}`), 200);
  await expectStatus(actions('?cursor=nonsense'), 400);
  await expectStatus(hooks('DELETE', '/v1/webhooks/{id}', oneEndpoint(endpointId), asOwner), 204);
  await expectStatus(hooks('DELETE', '/v1/webhooks/{id}', oneEndpoint(endpointId), asOwner), 404);

  // Budgets: an owner reads its own (200, 401); operators set (200, 400, 401, 409), read, audit
  // and remove (200, 400) anyone's. The owner is one with no jobs here.
  await expectStatus(hooks('GET', '/v1/budgets', '/v1/budgets', asOwner), 200);
  await expectStatus(hooks('GET', '/v1/budgets', '/v1/budgets', {}), 401);
  const budgetOf = (method: string, query: string, body: string, headers = asOperator) =>
    hooks(
      method,
      '/v1/operator/budgets/{owner}',
      `/v1/operator/budgets/openapi-owner${query}`,
      jsonOf(headers),
      body,
    );
  const usd = '{"currency":"USD","amount":5,"reason":"openapi"}';
  await expectStatus(budgetOf('PUT', '?period=day', usd), 200);
  await expectStatus(budgetOf('PUT', '?period=week', usd), 400);
  await expectStatus(budgetOf('PUT', '?period=day', usd, asOwner), 401);
  await expectStatus(
    budgetOf('PUT', '?period=day', '{"currency":"EUR","amount":5,"reason":"openapi"}'),
    409,
  );
  await expectStatus(
    hooks('GET', '/v1/operator/budgets', '/v1/operator/budgets?owner=openapi-owner', asOperator),
    200,
  );
  await expectStatus(
    hooks(
      'GET',
      '/v1/operator/budgets/{owner}/changes',
      '/v1/operator/budgets/openapi-owner/changes',
      asOperator,
    ),
    200,
  );
  await expectStatus(budgetOf('DELETE', '?period=day', '{"reason":""}'), 400);
  await expectStatus(budgetOf('DELETE', '?period=day', '{"reason":"openapi"}'), 200);

  // What the service says about itself.
  await expectStatus(send({ method: 'GET', route: '/healthz', path: '/healthz' }), 200);
  await expectStatus(send({ method: 'GET', route: '/readyz', path: '/readyz' }), 200);
  await expectStatus(send({ method: 'GET', route: '/metrics', path: '/metrics' }), 200);
  const problem = (type: string) =>
    send({ method: 'GET', route: '/problems/{type}', path: `/problems/${type}` });
  await expectStatus(problem('not-found'), 200);
  await expectStatus(problem('no-such-thing'), 404);

  expect({ surprises, misfits: misfits() }).toEqual({ surprises: [], misfits: [] });
  // Every route of the document was heard from.
  const heard = new Set(seen.map(({ exchange }) => `${exchange.method} ${exchange.route}`));
  expect(documentedRoutes().filter((route) => !heard.has(route))).toEqual([]);
});

/** Every route of the document, as `METHOD /path`, sorted. */
function documentedRoutes(): string[] {
  return Object.entries(document.paths)
    .flatMap(([route, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`),
    )
    .sort();
}

/** Routes that answer without PostgreSQL: they have no 503 of an outage to show. */
const DATABASE_FREE = ['GET /healthz', 'GET /problems/{type}'];

test('with PostgreSQL unreachable, the 503 of every route that reads it is documented too', async () => {
  const proxy = await startLinkProxy(postgresAddress());
  const api = await stack.startExtraApi({
    DATABASE_URL: throughPort(stack.databaseUrl, proxy.port),
  });
  const from = seen.length;
  try {
    await proxy.breakWith({ kind: 'refuse' });
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const summary = JSON.stringify({ type: 'summarize', input: { text: 'Down. Documented.' } });
    const report = JSON.stringify({ attemptId: `${id}:1`, status: 'failed', error: 'no' });
    const exchanges: Exchange[] = [
      {
        method: 'POST',
        route: '/v1/jobs',
        path: '/v1/jobs',
        headers: jsonOf({ ...asOwner, 'idempotency-key': freshKey('down') }),
        body: summary,
      },
      { method: 'GET', route: '/v1/jobs', path: '/v1/jobs', headers: asOwner },
      { method: 'GET', route: '/readyz', path: '/readyz' },
      // Its gauges count jobs and attempts in the database.
      { method: 'GET', route: '/metrics', path: '/metrics' },
      { method: 'GET', route: '/v1/jobs/{id}', path: `/v1/jobs/${id}`, headers: asOwner },
      {
        method: 'POST',
        route: '/v1/jobs/{id}/attempts',
        path: `/v1/jobs/${id}/attempts`,
        headers: jsonOf(asOwner),
        body: '{}',
      },
      {
        method: 'POST',
        route: '/v1/jobs/{id}/cancel',
        path: `/v1/jobs/${id}/cancel`,
        headers: jsonOf(asOwner),
        body: '{}',
      },
      { method: 'GET', route: '/v1/webhooks', path: '/v1/webhooks', headers: asOwner },
      {
        method: 'POST',
        route: '/v1/webhooks',
        path: '/v1/webhooks',
        headers: jsonOf(asOwner),
        body: '{"url":"http://127.0.0.1:9/hooks"}',
      },
      { method: 'GET', route: '/v1/webhooks/{id}', path: `/v1/webhooks/${id}`, headers: asOwner },
      {
        method: 'DELETE',
        route: '/v1/webhooks/{id}',
        path: `/v1/webhooks/${id}`,
        headers: asOwner,
      },
      {
        method: 'POST',
        route: '/v1/webhooks/{id}/enable',
        path: `/v1/webhooks/${id}/enable`,
        headers: asOwner,
      },
      {
        method: 'POST',
        route: '/v1/webhooks/{id}/secret-rotations',
        path: `/v1/webhooks/${id}/secret-rotations`,
        headers: jsonOf(asOwner),
        body: '{}',
      },
      {
        method: 'GET',
        route: '/v1/jobs/{id}/webhook-deliveries',
        path: `/v1/jobs/${id}/webhook-deliveries`,
        headers: asOwner,
      },
      {
        method: 'POST',
        route: '/v1/operator/jobs/{id}/cancel',
        path: `/v1/operator/jobs/${id}/cancel`,
        headers: jsonOf(asOperator),
        body: '{"reason":"down"}',
      },
      {
        method: 'POST',
        route: '/v1/operator/attempts/{attemptId}/resolve',
        path: `/v1/operator/attempts/${id}:1/resolve`,
        headers: jsonOf(asOperator),
        body: '{"outcome":"failed","reason":"down"}',
      },
      {
        method: 'POST',
        route: '/v1/operator/jobs/{id}/release-key',
        path: `/v1/operator/jobs/${id}/release-key`,
        headers: jsonOf(asOperator),
        body: '{"reason":"down"}',
      },
      {
        method: 'GET',
        route: '/v1/operator/webhooks',
        path: '/v1/operator/webhooks',
        headers: asOperator,
      },
      ...['disable', 'enable', 'delete'].map((action) => ({
        method: 'POST',
        route: `/v1/operator/webhooks/{id}/${action}`,
        path: `/v1/operator/webhooks/${id}/${action}`,
        headers: jsonOf(asOperator),
        body: '{"reason":"down"}',
      })),
      {
        method: 'GET',
        route: '/v1/operator/webhook-actions',
        path: '/v1/operator/webhook-actions',
        headers: asOperator,
      },
      ...[
        ['/v1/webhooks/{id}/redeliver', asOwner],
        ['/v1/operator/webhooks/{id}/redeliver', asOperator],
      ].map(([route, headers]) => ({
        method: 'POST',
        route: route as string,
        path: (route as string).replace('{id}', id),
        headers: jsonOf(headers as Record<string, string>),
        body: '{"failedSince":"2026-01-01T00:00:00Z","reason":"down"}',
      })),
      { method: 'GET', route: '/v1/budgets', path: '/v1/budgets', headers: asOwner },
      {
        method: 'GET',
        route: '/v1/operator/budgets',
        path: '/v1/operator/budgets',
        headers: asOperator,
      },
      {
        method: 'GET',
        route: '/v1/operator/budgets/{owner}/changes',
        path: '/v1/operator/budgets/someone/changes',
        headers: asOperator,
      },
      ...[
        ['PUT', '{"currency":"USD","amount":1,"reason":"down"}'],
        ['DELETE', '{"reason":"down"}'],
      ].map(([method, body]) => ({
        method: method!,
        route: '/v1/operator/budgets/{owner}',
        path: '/v1/operator/budgets/someone?period=day',
        headers: jsonOf(asOperator),
        body: body!,
      })),
      {
        method: 'POST',
        route: '/v1/callbacks/{provider}',
        path: '/v1/callbacks/simulator-pay',
        headers: {
          'content-type': 'application/json',
          'onejob-signature': signCallback(CALLBACK_SECRET, report),
        },
        body: report,
      },
    ];
    for (const exchange of exchanges) await expectStatus(send({ ...exchange, base: api.url }), 503);
    const during = seen.slice(from);
    expect({ surprises, misfits: misfits(during) }).toEqual({ surprises: [], misfits: [] });
    // Every documented route that needs the database was asked, and each said when to come back.
    const asked = during.map(({ exchange }) => `${exchange.method} ${exchange.route}`);
    expect(asked.sort()).toEqual(documentedRoutes().filter((r) => !DATABASE_FREE.includes(r)));
    for (const answer of during) {
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(JSON.parse(answer.body)).toMatchObject({ type: '/problems/service-unavailable' });
    }
    // Readiness names the dependency that is away, and only that one.
    const readiness = during.find(({ exchange }) => exchange.route === '/readyz')!;
    expect(JSON.parse(readiness.body)).toMatchObject({
      checks: { postgres: { ok: false }, temporal: { ok: true } },
    });
  } finally {
    await api.stop();
    await proxy.close();
  }
});

test('readiness names Temporal when it is the one away, and says ready again once it answers, without a restart', async () => {
  const [host, port] = stack.serviceEnv.TEMPORAL_ADDRESS!.split(':');
  const proxy = await startLinkProxy({ host: host!, port: Number(port) });
  const api = await stack.startExtraApi({ TEMPORAL_ADDRESS: `127.0.0.1:${proxy.port}` });
  const from = seen.length;
  const readyz = () => send({ method: 'GET', route: '/readyz', path: '/readyz', base: api.url });
  try {
    await expectStatus(readyz(), 200);
    await proxy.breakWith({ kind: 'refuse' });
    const away = await readyz();
    expect(away.status).toBe(503);
    expect(JSON.parse(away.body)).toMatchObject({
      type: '/problems/service-unavailable',
      checks: { postgres: { ok: true }, temporal: { ok: false, reason: expect.any(String) } },
    });
    // The reason is a code or a wait, never where the dependency lives.
    expect(away.body).not.toContain(String(proxy.port));
    await proxy.heal();
    await eventually(readyz, (answer) => answer.status === 200, 60_000);
    expect({ surprises, misfits: misfits(seen.slice(from)) }).toEqual({
      surprises: [],
      misfits: [],
    });
  } finally {
    await api.stop();
    await proxy.close();
  }
});
