import { randomBytes } from 'node:crypto';
import { OPERATOR_TOKEN } from './identities';
import { eventually } from './polling';
import type { TestStack } from './stack';
import { workflowStatus } from './temporal';

/** A job as the API shows it (the fields tests read). */
export interface JobView {
  id: string;
  status: string;
  input: Record<string, unknown>;
  workflowId: string;
  result: Record<string, unknown> | null;
  completedBy: string | null;
  failure: Record<string, unknown> | null;
  notes: Array<Record<string, unknown>>;
  attempts: Array<{
    id: string;
    seq: number;
    state: string;
    provider: string;
    error: Record<string, unknown> | null;
    rawOutput: unknown;
  }>;
}

let keyCounter = 0;
/** Random bytes per process: the pid alone could repeat once a process has ended. */
const processTag = `${process.pid.toString(36)}${randomBytes(4).toString('hex')}`;
/**
 * A key no other test uses, in this process or another: Jest's workers each count from one, so
 * time and count alone gave two of them the same key in the same millisecond, and so the same
 * job and workflow id. Printable ASCII, far under the API's 255 characters.
 */
export function freshKey(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${processTag}-${++keyCounter}`;
}

/** POST /v1/jobs with a fresh key; expects 201. */
export async function createJob(
  stack: TestStack,
  body: unknown,
  key = freshKey('job'),
): Promise<JobView> {
  const response = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body,
  });
  if (response.status !== 201)
    throw new Error(`create ${key}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as JobView;
}

export async function readJob(stack: TestStack, id: string): Promise<JobView> {
  return (await (await stack.request('GET', `/v1/jobs/${id}`)).json()) as JobView;
}

/** Polls the job until `done` holds. */
export function untilJob(
  stack: TestStack,
  id: string,
  done: (job: JobView) => boolean,
  timeoutMs = 30_000,
): Promise<JobView> {
  return eventually(() => readJob(stack, id), done, timeoutMs);
}

/** A charge body with an account of its own. */
export function chargeBody(providers: string[], account = freshKey('acct')) {
  return {
    type: 'charge',
    input: { amountCents: 1250, currency: 'EUR', account },
    providers,
  };
}

/** A summary body over a plan of providers. */
export function summarizeBody(providers: string[]) {
  return {
    type: 'summarize',
    input: { text: 'The first sentence is the summary. The second one is not needed.' },
    providers,
  };
}

/** Each attempt as [provider, state], in order: what the plan did. */
export const triedOf = (job: JobView): string[][] => job.attempts.map((a) => [a.provider, a.state]);

export const succeeded = (job: JobView): boolean => job.status === 'succeeded';

/** Operator routes with the operator's token. */
export function operator(stack: TestStack, method: string, path: string, body: unknown) {
  return stack.request(method, `/v1/operator${path}`, { body, token: OPERATOR_TOKEN });
}

/** A job status that never changes again. */
export const ended = (job: Pick<JobView, 'status'>): boolean =>
  ['succeeded', 'failed', 'cancelled'].includes(job.status);

/**
 * Waits until the job has ended or its workflow says an operator is needed, whichever first. The
 * workflow is asked first: what it knows was written to the row before it knew, so the row read
 * after it is at least as new (read the other way round, the row could predate the look).
 */
export async function endedOrNeedsOperator(
  stack: TestStack,
  job: Pick<JobView, 'id' | 'workflowId'>,
) {
  return eventually(
    async () => {
      const workflow = await workflowStatus(stack, job.workflowId);
      return { job: await readJob(stack, job.id), workflow };
    },
    ({ job: row, workflow }) => ended(row) || workflow.needsOperator,
  );
}
