import { OneJobClient, OneJobProblemError } from 'onejob-client';

// npm start prints both: the API's address and a development token.
const onejob = new OneJobClient({
  baseUrl: process.env.ONEJOB_URL ?? 'http://127.0.0.1:3000',
  token: process.env.ONEJOB_TOKEN ?? 'onejob-dev-token',
});

async function main(): Promise<void> {
  // One intent, one key: however often this runs, it is one job.
  const orderId = process.env.ORDER_ID ?? `${Date.now()}`;
  const { job, replayed } = await onejob.createJob({
    type: 'summarize',
    input: { text: 'Temporal keeps workflows durable. The rest is detail.' },
    idempotencyKey: `order-${orderId}-summary`,
  });
  console.log(`job ${job.id} ${replayed ? 'was already there' : 'created'}: ${job.status}`);

  // Long-polls until the job has ended (or a minute passes).
  const done = await onejob.waitForJob(job.id, { timeoutMs: 60_000 });
  console.log(`job ${done.id} ${done.status}: ${JSON.stringify(done.result)}`);

  // The newest of this owner's jobs that succeeded.
  const { jobs } = await onejob.listJobs({ status: 'succeeded', limit: 5 });
  console.log(`${jobs.length} recent jobs succeeded`);

  // An ended job is neither tried again nor cancelled: the API says what it ended as.
  try {
    await onejob.cancelJob(done.id, { reason: 'changed my mind' });
  } catch (error) {
    if (!(error instanceof OneJobProblemError) || error.status !== 409) throw error;
    console.log(`not cancelled: it ${String(error.problem.jobStatus)}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
