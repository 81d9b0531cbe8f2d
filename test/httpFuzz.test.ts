import fc from 'fast-check';
import { jobPageSchema, jobResourceSchema } from '../src/service/jobDocument';
import {
  describeRequest,
  type FuzzRequest,
  type FuzzWorld,
  fuzzRequest,
  requestBytes,
} from './support/fuzzRequests';
import {
  LONGEST_OWNER,
  LONGEST_OWNER_TOKEN,
  OPERATOR_TOKEN,
  OTHER_OWNER,
  OTHER_TOKEN,
  TEST_OWNER,
  TEST_TOKEN,
  TRICK_OWNERS,
} from './support/identities';
import { chargeBody, createJob, freshKey, readJob, untilJob } from './support/jobs';
import { byLength, explorationSeed } from './support/lengths';
import { type RawAnswer, sendRaw } from './support/rawHttp';
import { useTestStack } from './support/stack';

/**
 * The HTTP fuzzer: raw requests to every route, most of them nearly right, with odd methods,
 * paths, headers and bodies. Whatever arrives, the answer is a 4xx problem+json or a correct
 * success — never a 5xx, never a dropped connection, never another owner's job — and the
 * service still answers afterwards. Node's own refusals of unparseable requests count as
 * answers only when they are problem+json too (src/api/errorHandler.ts makes them so).
 *
 * ONEJOB_FUZZ_SEED replays a run; ONEJOB_FUZZ_REQUESTS sets how many requests it sends (by
 * default 3,000 in `npm test`, always from the same seed, and 20,000 in `npm run test:long`,
 * from a new seed each run).
 */
const stack = useTestStack();

const REQUESTS = Number(
  process.env.ONEJOB_FUZZ_REQUESTS ?? byLength({ short: 3_000, long: 20_000 }),
);
/** Fixed in `npm test`, new each `npm run test:long`; ONEJOB_FUZZ_SEED replays one. */
const { seed: SEED, origin: SEED_ORIGIN } = explorationSeed('ONEJOB_FUZZ_SEED', 1_034_873_961);
/** Requests sent at once, per property run. */
const BATCH = 10;
const ANSWER_TIMEOUT_MS = 20_000;

const OWNER_BY_TOKEN = new Map<string, string>([
  [TEST_TOKEN, TEST_OWNER],
  [OTHER_TOKEN, OTHER_OWNER],
  [LONGEST_OWNER_TOKEN, LONGEST_OWNER],
  ...Object.entries(TRICK_OWNERS).map(([owner, token]): [string, string] => [token, owner]),
]);

/** The token of the first Authorization header: the one Node keeps when there are several. */
function callerToken(request: FuzzRequest): string | undefined {
  const header = request.headers.find(([name]) => name.toLowerCase() === 'authorization');
  return header ? /^Bearer\s+(\S+)\s*$/i.exec(header[1])?.[1] : undefined;
}

interface JobLike {
  id: string;
  workflowId: string;
  idempotencyKey: string;
}

function isJob(value: unknown): value is JobLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as JobLike).id === 'string' &&
    typeof (value as JobLike).workflowId === 'string' &&
    typeof (value as JobLike).idempotencyKey === 'string'
  );
}

/** The jobs a success shows: a job, or a page of them. */
function jobsShown(body: unknown): JobLike[] {
  if (isJob(body)) return [body];
  const page = body as { jobs?: unknown };
  if (typeof body === 'object' && body !== null && Array.isArray(page.jobs)) {
    return page.jobs.filter(isJob);
  }
  return [];
}

/** What is wrong with an answer, or undefined when it keeps the promise. */
async function violation(request: FuzzRequest, answer: RawAnswer): Promise<string | undefined> {
  const { status, headers, body } = answer;
  const contentType = headers['content-type'] ?? '';
  const head = request.method === 'HEAD';
  if (status >= 500) return `a ${status}: ${body.toString('utf8').slice(0, 500)}`;
  if (status >= 400) {
    if (!contentType.startsWith('application/problem+json'))
      return `a ${status} with Content-Type ${JSON.stringify(contentType)}: ${body.toString('utf8').slice(0, 300)}`;
    if (head) return undefined;
    let problem: Record<string, unknown>;
    try {
      problem = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      return `a ${status} whose problem is not JSON: ${body.toString('utf8').slice(0, 300)}`;
    }
    if (
      typeof problem.type !== 'string' ||
      !problem.type.startsWith('/problems/') ||
      typeof problem.title !== 'string' ||
      problem.status !== status
    )
      return `a ${status} whose problem lacks type, title or status: ${JSON.stringify(problem)}`;
    return undefined;
  }
  if (status < 200) return `a final answer with status ${status}`;
  if (status >= 300) return undefined;
  if (head || !/json/.test(contentType)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return `a ${status} whose JSON body does not parse: ${body.toString('utf8').slice(0, 300)}`;
  }
  const token = callerToken(request);
  const target = request.target.toLowerCase();
  if (target.includes('/v1/operator') && token !== OPERATOR_TOKEN)
    return `an operator route answered ${status} to a caller without the operator token`;
  const jobs = jobsShown(parsed);
  if (jobs.length === 0) return undefined;
  // A job or a page of them is the whole representation the document promises.
  const shape = (isJob(parsed) ? jobResourceSchema : jobPageSchema).safeParse(parsed);
  if (!shape.success)
    return `a ${status} whose job representation is malformed: ${shape.error.message.slice(0, 300)}`;
  seen.jobsChecked += jobs.length;
  const owner = token === undefined ? undefined : OWNER_BY_TOKEN.get(token);
  if (owner === undefined) return `jobs shown (${status}) to a caller who is no owner`;
  const { rows } = await stack.pool.query<{ id: string; owner_id: string }>(
    'SELECT id, owner_id FROM jobs WHERE id = ANY($1::uuid[])',
    [jobs.map((job) => job.id)],
  );
  const owners = new Map(rows.map((row) => [row.id, row.owner_id]));
  for (const job of jobs) {
    if (owners.get(job.id) !== owner)
      return `job ${job.id} of ${JSON.stringify(owners.get(job.id))} shown to ${JSON.stringify(owner)}`;
  }
  return undefined;
}

/** What the run saw, so that a run which never got past the outer checks fails. */
const seen = { byStatusClass: new Map<string, number>(), jobsChecked: 0 };

async function checkOne(request: FuzzRequest, port: number): Promise<void> {
  const outcome = await sendRaw(port, requestBytes(request, port), {
    headRequest: request.method === 'HEAD',
    timeoutMs: ANSWER_TIMEOUT_MS,
  });
  const problem =
    outcome.kind === 'no-answer'
      ? `no answer (${outcome.reason}); received ${JSON.stringify(outcome.received)}`
      : await violation(request, outcome.answer);
  if (outcome.kind === 'answer') {
    const statusClass = `${String(outcome.answer.status).charAt(0)}xx`;
    seen.byStatusClass.set(statusClass, (seen.byStatusClass.get(statusClass) ?? 0) + 1);
  }
  if (problem) throw new Error(`${problem}\n  for ${describeRequest(request)}`);
}

/** A job of `token`'s owner, once it has succeeded (the API's own wait), with its first attempt. */
async function succeededJob(token: string, body: unknown): Promise<FuzzWorld['ownerJob']> {
  const created = await stack.request('POST', '/v1/jobs', {
    token,
    headers: { 'idempotency-key': freshKey('fuzz-seed') },
    body,
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const done = await stack.request('GET', `/v1/jobs/${id}?wait=30`, { token });
  const job = (await done.json()) as { status: string; attempts: Array<{ id: string }> };
  expect(job.status).toBe('succeeded');
  return { id, attemptId: job.attempts[0]!.id };
}

test(`${REQUESTS} raw requests: a 4xx problem+json or a correct success, never a 5xx, a dropped connection or another owner's job`, async () => {
  // The seed goes to the output first, so a failing run can be replayed (docs/development.md).
  console.log(
    `HTTP fuzzer: ${REQUESTS} requests, seed ${SEED} (${SEED_ORIGIN}; replay: ONEJOB_FUZZ_SEED=${SEED})`,
  );
  const world: FuzzWorld = {
    ownerJob: await succeededJob(TEST_TOKEN, {
      type: 'summarize',
      input: { text: 'The fuzzer seeds this job of owner A.' },
    }),
    // A charge: its provider takes signed callbacks, so they reach a real attempt.
    otherOwnerJob: await succeededJob(OTHER_TOKEN, chargeBody(['simulator-pay'])),
  };
  const port = Number(new URL(stack.apiUrl).port);
  const startedAt = Date.now();

  const details = await fc.check(
    fc.asyncProperty(
      fc.array(fuzzRequest(world), { minLength: BATCH, maxLength: BATCH }),
      async (batch) => {
        await Promise.all(batch.map((request) => checkOne(request, port)));
      },
    ),
    { numRuns: Math.ceil(REQUESTS / BATCH), seed: SEED, endOnFailure: true },
  );
  console.log(
    `HTTP fuzzer: ${details.numRuns * BATCH} requests in ${Date.now() - startedAt} ms, answers ${JSON.stringify(Object.fromEntries(seen.byStatusClass))}, ${seen.jobsChecked} jobs shown checked for their owner`,
  );
  if (details.failed) {
    const error =
      details.errorInstance instanceof Error
        ? details.errorInstance.message
        : String(details.errorInstance);
    throw new Error(`the HTTP fuzzer found a broken promise (seed ${SEED}): ${error}`);
  }
  expect(details.numRuns).toBe(Math.ceil(REQUESTS / BATCH));
  // The requests got through to the routes: successes, jobs shown, and refusals all occurred.
  expect(seen.byStatusClass.get('2xx') ?? 0).toBeGreaterThan(0);
  expect(seen.byStatusClass.get('4xx') ?? 0).toBeGreaterThan(0);
  expect(seen.jobsChecked).toBeGreaterThan(0);

  // The service still answers, and still does its job.
  expect(stack.api.child.exitCode).toBeNull();
  const health = await fetch(`${stack.apiUrl}/healthz`);
  expect(health.status).toBe(200);
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: 'After the fuzzer, the service still works.' },
  });
  expect((await readJob(stack, job.id)).id).toBe(job.id);
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');
}, 600_000);
