import { contractVersion, findJobType } from '../src/jobTypes';
import { createJob, type JobView, untilJob } from './support/jobs';
import { requestsFor } from './support/providerLedger';
import { chatProvider } from './support/providers';
import { attemptRows } from './support/rows';
import { certifyForSetup, useTestStack } from './support/stack';

/**
 * With ONEJOB_REQUIRE_CERTIFIED_PRIMARY=true even the primary must be certified for the contract
 * in force: an uncertified one is skipped at admission, as a fallback would be, and never called.
 */
const stack = useTestStack({
  providers: (url) => [
    chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 20_000 }),
    chatProvider(url, 'chat-backup', 'sim-backup', { timeoutMs: 20_000 }),
  ],
  env: { ONEJOB_REQUIRE_CERTIFIED_PRIMARY: 'true' },
  certify: [['chat-backup', 'summarize']],
});

const VERSION = contractVersion(findJobType('summarize')!);
const summarize = (providers: string[]) => ({
  type: 'summarize',
  input: { text: 'Certified first. Then it may run.' },
  providers,
});
const ended = (j: JobView) => ['succeeded', 'failed', 'cancelled'].includes(j.status);

test('an uncertified primary is refused when certification is required: the job fails with no-certified-provider and the provider is never called', async () => {
  const job = await createJob(stack, summarize(['chat']));
  const done = await untilJob(stack, job.id, ended);
  expect(done.status).toBe('failed');
  expect(done.failure).toMatchObject({ code: 'no-certified-provider' });
  expect(done.notes).toEqual([
    expect.objectContaining({
      event: 'provider_skipped',
      provider: 'chat',
      reason: `not certified for the summarize contract ${VERSION}`,
    }),
  ]);
  expect(await attemptRows(stack.pool, job.id)).toEqual([]);
  expect(requestsFor(stack, job.id, 'chat')).toEqual([]);
});

test('an uncertified primary is skipped for the certified fallback when certification is required', async () => {
  const job = await createJob(stack, summarize(['chat', 'chat-backup']));
  const done = await untilJob(stack, job.id, ended);
  expect(done.status).toBe('succeeded');
  expect(done.completedBy).toBe(`${job.id}:1`);
  expect((await attemptRows(stack.pool, job.id)).map((a) => [a.provider, a.state])).toEqual([
    ['chat-backup', 'succeeded'],
  ]);
  expect(done.notes).toEqual([expect.objectContaining({ provider: 'chat' })]);
  expect(requestsFor(stack, job.id, 'chat').map((r) => r.model)).toEqual(['sim-backup']);
});

test('once certified, the same primary runs', async () => {
  await certifyForSetup(stack, [['chat', 'summarize']]);
  const job = await createJob(stack, summarize(['chat']));
  const done = await untilJob(stack, job.id, ended);
  expect(done.status).toBe('succeeded');
  expect(done.notes).toEqual([]);
  expect((await attemptRows(stack.pool, job.id)).map((a) => [a.provider, a.state])).toEqual([
    ['chat', 'succeeded'],
  ]);
});
