import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createJob, summarizeBody, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { useTestStack } from './support/stack';
import { WebhookReceiver } from './support/webhookReceiver';

/**
 * A redelivery joins the event's sender when one still runs (it retries another endpoint of the
 * same owner). Each delivery is owed the whole retry window: when that sender gives up, it ends
 * what was written before it began, and the redelivery goes on in a sender run of its own.
 */
const GIVE_UP_AFTER_MS = 20_000;
const stack = useTestStack({
  providers: (url) => [chatProvider(url, 'chat', 'sim-steady')],
  env: {
    ONEJOB_WEBHOOK_FIRST_RETRY_MS: '200',
    ONEJOB_WEBHOOK_MAX_RETRY_INTERVAL_MS: '500',
    ONEJOB_WEBHOOK_GIVE_UP_AFTER_MS: String(GIVE_UP_AFTER_MS),
    // A receiver back is tried again within a second, not after the default half minute.
    ONEJOB_WEBHOOK_BREAKER_FIRST_HOLD_MS: '500',
    ONEJOB_WEBHOOK_BREAKER_LONGEST_HOLD_MS: '1000',
  },
});
const receivers: WebhookReceiver[] = [];
afterAll(async () => {
  for (const receiver of receivers) await receiver.down();
});

async function endpointFor(receiver: WebhookReceiver): Promise<string> {
  const registered = await stack.request('POST', '/v1/webhooks', {
    body: { url: receiver.url, events: ['job.succeeded'] },
  });
  const endpoint = (await registered.json()) as { id: string; secret: string };
  receiver.secret = endpoint.secret;
  return endpoint.id;
}

const deliveriesTo = async (endpointId: string, jobId: string) =>
  (
    await stack.pool.query<{ id: string; state: string; redelivery_of: string | null }>(
      `SELECT id, state, redelivery_of FROM webhook_deliveries
        WHERE endpoint_id = $1 AND job_id = $2 ORDER BY created_at`,
      [endpointId, jobId],
    )
  ).rows;

test("a redelivery that joins a sender still retrying another endpoint is not given up with that endpoint's deliveries: it gets a window of its own and is delivered once its receiver is back", async () => {
  const dead = await WebhookReceiver.start();
  const flaky = await WebhookReceiver.start();
  receivers.push(dead, flaky);
  const deadEndpoint = await endpointFor(dead);
  const flakyEndpoint = await endpointFor(flaky);
  await dead.down();

  const job = await createJob(stack, summarizeBody(['chat']));
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  // The event reaches the live receiver; the dead one's delivery is retried.
  const [first] = await eventually(
    () => deliveriesTo(flakyEndpoint, job.id),
    (rows) => rows[0]?.state === 'delivered',
  );
  // The owner asks for it again, once the receiver went down: the redelivery joins the sender
  // that still retries the dead endpoint.
  await flaky.down();
  const resent = await stack.request('POST', `/v1/webhooks/${flakyEndpoint}/redeliver`, {
    body: { deliveryId: first!.id, reason: 'our consumer lost it' },
  });
  expect(resent.status).toBe(202);
  const [deadDelivery] = await deliveriesTo(deadEndpoint, job.id);
  // The scenario holds only while that sender runs: it gives up 20 s after the job ended.
  expect(deadDelivery?.state).toBe('pending');

  // The sender's window ends: the dead endpoint's delivery is failed, the redelivery is not.
  await eventually(
    () => deliveriesTo(deadEndpoint, job.id),
    (rows) => rows[0]?.state === 'failed',
    GIVE_UP_AFTER_MS + 20_000,
  );
  const afterGiveUp = await deliveriesTo(flakyEndpoint, job.id);
  expect(afterGiveUp.map((row) => [row.state, row.redelivery_of])).toEqual([
    ['delivered', null],
    ['pending', first!.id],
  ]);

  await flaky.up();
  await eventually(
    () => deliveriesTo(flakyEndpoint, job.id),
    (rows) => rows[1]?.state === 'delivered',
  );
  // Received twice, with the same webhook-id (the receiver de-duplicates), each verified.
  const received = flaky.of(job.id).filter((request) => request.answered < 300);
  expect(received.map((request) => [request.id, 'error' in request.verified])).toEqual([
    [first!.id, false],
    [first!.id, false],
  ]);
  await recordSenderHistory(`webhooks/${job.id}/job.succeeded`);
});

/**
 * With ONEJOB_RECORD_SENDER_HISTORY=<name>, saves the history of the sender's first run (the one
 * that gave up and continued as new) as test/replay/senders/<name>.json, which
 * test/engines/replay.test.ts replays against the current code.
 */
async function recordSenderHistory(workflowId: string): Promise<void> {
  const name = process.env.ONEJOB_RECORD_SENDER_HISTORY;
  if (!name) return;
  const latest = await stack.temporal.workflow.getHandle(workflowId).describe();
  const firstRunId = latest.raw.workflowExecutionInfo?.firstRunId ?? latest.runId;
  const history = await stack.temporal.workflow.getHandle(workflowId, firstRunId).fetchHistory();
  const file = path.join(__dirname, 'replay', 'senders', `${name}.json`);
  await writeFile(file, `${historyToJSON(history)}\n`);
}
