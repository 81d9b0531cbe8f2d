import { networkInterfaces } from 'node:os';
import { simulatorProviders } from '../src/providers/registry';
import { TEST_TOKEN } from './support/identities';
import { chargeBody, createJob, operator, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { attemptRows } from './support/rows';
import { startTestStack, type TestStack } from './support/stack';

/** Prometheus metrics: the service's own (API) and the Temporal SDK's (worker). */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    workerProcess: true,
    // The payment provider times out after a second, so a held charge is soon `unknown`.
    providers: (url) =>
      simulatorProviders(url).map((p) =>
        p.name === 'simulator-pay' ? { ...p, timeoutMs: 1_000 } : p,
      ),
  });
});
afterAll(async () => {
  await stack?.stop();
});

function value(text: string, metric: string): number {
  const line = text.split('\n').find((l) => l.startsWith(metric));
  return line ? Number(line.split(' ').pop()) : Number.NaN;
}

test('the API counts creates, replays and conflicts, and reports attempts, unknown jobs and races from the database', async () => {
  const body = { type: 'summarize', input: { text: 'Count me once. Replay me twice.' } };
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'metrics-1' },
    body,
  });
  const { id } = (await created.json()) as { id: string };
  await stack.request('POST', '/v1/jobs', { headers: { 'idempotency-key': 'metrics-1' }, body });
  await stack.request('POST', '/v1/jobs', { headers: { 'idempotency-key': 'metrics-1' }, body });
  await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'metrics-1' },
    body: { ...body, input: { text: 'Something else entirely.' } },
  });
  await stack.request('GET', `/v1/jobs/${id}?wait=30`);

  // One job blocked: its charge is held at the provider past the attempt timeout.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'metrics-unknown' } });
  const beforeBlocked = Date.now();
  const blocked = await createJob(stack, chargeBody(['simulator-pay']));
  await untilJob(stack, blocked.id, (job) => job.status === 'unknown');
  // One race: a summary held until its job was cancelled, then let go, loses the CAS.
  stack.simulator.inject({ route: 'chat', fault: { kind: 'hold', gate: 'metrics-race' } });
  const raced = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Cancelled while the model thinks.' },
  });
  await eventually(
    () => attemptRows(stack.pool, raced.id),
    (rows) => rows[0]?.state === 'running',
  );
  expect(
    (await operator(stack, 'POST', `/jobs/${raced.id}/cancel`, { reason: 'metrics' })).status,
  ).toBe(200);
  stack.simulator.openGate('metrics-race');
  await eventually(
    () => attemptRows(stack.pool, raced.id),
    (rows) => rows[0]?.state === 'lost',
  );

  const response = await fetch(`${stack.apiUrl}/metrics`);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  const text = await response.text();
  // The blocked charge is the only unknown attempt: it has been out since after its create.
  const oldestUnknown = value(text, 'onejob_unknown_attempt_oldest_seconds');
  expect(oldestUnknown).toBeGreaterThan(0);
  expect(oldestUnknown).toBeLessThanOrEqual((Date.now() - beforeBlocked) / 1000);
  expect(value(text, 'onejob_jobs_created_total{type="summarize"}')).toBe(2);
  expect(value(text, 'onejob_jobs_created_total{type="charge"}')).toBe(1);
  expect(value(text, 'onejob_jobs_replayed_total{type="summarize"}')).toBe(2);
  expect(value(text, 'onejob_idempotency_conflicts_total')).toBe(1);
  expect(value(text, 'onejob_attempts{state="succeeded"}')).toBe(1);
  expect(value(text, 'onejob_jobs_unknown')).toBe(1);
  expect(value(text, 'onejob_race_events')).toBe(1);
  expect(value(text, 'onejob_attempts{state="unknown"}')).toBe(1);
  expect(value(text, 'onejob_attempts{state="lost"}')).toBe(1);
});

/** Every sample of `metric` whose labels include `labels`, summed. */
function sum(text: string, metric: string, labels: Record<string, string>): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${metric}{`))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .reduce((total, line) => total + Number(line.split(' ').pop()), 0);
}

test("the API's request latency is a histogram by route template, method and status class: no job id in a label", async () => {
  const text = await (await fetch(`${stack.apiUrl}/metrics`)).text();
  const metric = 'onejob_http_request_duration_seconds_count';
  // The first test's creates (three 201s, two 200s), its conflict (409) and its reads.
  expect(sum(text, metric, { route: '/v1/jobs', method: 'POST', status_class: '2xx' })).toBe(5);
  expect(sum(text, metric, { route: '/v1/jobs', method: 'POST', status_class: '4xx' })).toBe(1);
  expect(
    sum(text, metric, { route: '/v1/jobs/:id', method: 'GET', status_class: '2xx' }),
  ).toBeGreaterThanOrEqual(1);
  await stack.request('GET', '/no/such/route');
  const after = await (await fetch(`${stack.apiUrl}/metrics`)).text();
  expect(sum(after, metric, { route: 'unmatched', status_class: '4xx' })).toBe(1);
  const series = after.split('\n').filter((line) => line.startsWith('onejob_http_request_'));
  expect(series.filter((line) => /[0-9a-f]{8}-[0-9a-f]{4}-/.test(line))).toEqual([]);
  // Buckets are cumulative, ending at +Inf with the count.
  expect(
    sum(after, 'onejob_http_request_duration_seconds_bucket', {
      route: '/v1/jobs',
      method: 'POST',
      status_class: '4xx',
      le: '+Inf',
    }),
  ).toBe(1);
});

test("the worker serves its own metrics with its health checks: each provider call's latency by provider and by the state it left the attempt in", async () => {
  const address = stack.serviceEnv.ONEJOB_WORKER_HEALTH_ADDRESS;
  const response = await fetch(`http://${address}/metrics`);
  expect(response.status).toBe(200);
  const text = await response.text();
  const metric = 'onejob_provider_call_duration_seconds_count';
  // From the first test: a summary that won, one that lost the race to a cancel.
  expect(sum(text, metric, { outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
  expect(sum(text, metric, { outcome: 'lost' })).toBeGreaterThanOrEqual(1);
  expect(text).toContain('onejob_worker_process_resident_memory_bytes');
});

test('each ended job is observed once in the job-duration histogram, by the process that ended it, and a settled unknown attempt in the time-unknown histogram', async () => {
  // The first test's blocked charge is settled by an operator: its attempt leaves unknown, and
  // its job (one provider only) fails.
  const blocked = await stack.pool.query<{ id: string; job_id: string }>(
    `SELECT a.id, a.job_id FROM attempts a JOIN jobs j ON j.id = a.job_id
      WHERE j.job_type = 'charge' AND a.state = 'unknown'`,
  );
  expect(blocked.rows).toHaveLength(1);
  const [{ id: attemptId, job_id: jobId }] = blocked.rows as [{ id: string; job_id: string }];
  const resolved = await operator(stack, 'POST', `/attempts/${attemptId}/resolve`, {
    outcome: 'failed',
    reason: 'the payment provider says it never arrived',
  });
  expect(resolved.status).toBe(200);
  await untilJob(stack, jobId, (job) => job.status === 'failed');

  const scrape = async (url: string) => (await fetch(`${url}/metrics`)).text();
  const worker = `http://${stack.serviceEnv.ONEJOB_WORKER_HEALTH_ADDRESS}`;
  const jobs = 'onejob_job_duration_seconds_count';
  // The reconciler observes the unknown attempt once it has woken its workflow.
  const charge = { provider: 'simulator-pay', settled_as: 'failed' };
  const unknownDone = await eventually(
    () => scrape(worker),
    (text) => sum(text, 'onejob_attempt_unknown_duration_seconds_count', charge) > 0,
  );
  expect(sum(unknownDone, 'onejob_attempt_unknown_duration_seconds_count', charge)).toBe(1);
  const [held] = (
    await stack.pool.query<{ seconds: number }>(
      `SELECT extract(epoch FROM finished_at - unknown_since)::float8 AS seconds
         FROM attempts WHERE id = $1`,
      [attemptId],
    )
  ).rows;
  expect(sum(unknownDone, 'onejob_attempt_unknown_duration_seconds_sum', charge)).toBeCloseTo(
    held!.seconds,
    3,
  );

  // Every job of this stack has ended: each is counted exactly once across the API and the
  // worker, under its type and the status it ended in.
  const ended = await stack.pool.query<{ job_type: string; terminal_status: string; n: number }>(
    `SELECT job_type, terminal_status, count(*)::int AS n FROM jobs
      WHERE terminal_status IS NOT NULL GROUP BY 1, 2`,
  );
  const open = await stack.pool.query(`SELECT 1 FROM jobs WHERE terminal_status IS NULL`);
  expect(open.rowCount).toBe(0);
  const observed = await eventually(
    async () => [await scrape(stack.apiUrl), await scrape(worker)] as const,
    ([api, work]) =>
      sum(api, jobs, {}) + sum(work, jobs, {}) >= ended.rows.reduce((n, row) => n + row.n, 0),
  );
  for (const row of ended.rows) {
    const labels = { type: row.job_type, status: row.terminal_status };
    expect([labels, sum(observed[0], jobs, labels) + sum(observed[1], jobs, labels)]).toEqual([
      labels,
      row.n,
    ]);
  }
  expect(ended.rows.map((row) => `${row.job_type}/${row.terminal_status}`).sort()).toEqual([
    'charge/failed',
    'summarize/cancelled',
    'summarize/succeeded',
  ]);
});

test('a scraper that asks for OpenMetrics gets it, from the API and the worker alike, and the Prometheus format after it is unchanged', async () => {
  const accept = 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5';
  const worker = `http://${stack.serviceEnv.ONEJOB_WORKER_HEALTH_ADDRESS}`;
  for (const [url, counter] of [
    [stack.apiUrl, 'onejob_jobs_created_total{type="summarize"}'],
    [worker, 'onejob_worker_process_cpu_seconds_total'],
  ] as const) {
    const plainBefore = await (await fetch(`${url}/metrics`)).text();
    const open = await fetch(`${url}/metrics`, { headers: { accept } });
    expect(open.headers.get('content-type')).toMatch(/^application\/openmetrics-text/);
    const text = await open.text();
    expect(text.endsWith('# EOF\n')).toBe(true);
    expect(text).toContain(counter);
    const plain = await fetch(`${url}/metrics`);
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain/);
    const plainText = await plain.text();
    expect(plainText).toContain(counter);
    expect(plainText).not.toContain('# EOF');
    // The same metrics, named the same, in both scrapes of the Prometheus format.
    const names = (t: string) =>
      t
        .split('\n')
        .filter((l) => l.startsWith('# TYPE'))
        .sort();
    expect(names(plainText)).toEqual(names(plainBefore));
  }
});

test('every scrape counts what changed since the last one: all-time totals and what is in flight', async () => {
  const scrape = async () => (await fetch(`${stack.apiUrl}/metrics`)).text();
  const before = await scrape();
  // One more job hangs in flight (the fault takes the next request: its own)…
  stack.simulator.inject({ route: 'chat', fault: { kind: 'hang' } });
  const hanging = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'metrics-hang' },
    body: { type: 'summarize', input: { text: 'Still running. Counted live.' } },
  });
  const { id } = (await hanging.json()) as { id: string };
  await eventually(
    () => stack.pool.query(`SELECT state FROM attempts WHERE job_id = $1`, [id]),
    (result) => result.rows[0]?.state === 'running',
  );
  // …and one more succeeds.
  const done = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'metrics-2' },
    body: { type: 'summarize', input: { text: 'Done. Counted at once.' } },
  });
  const finished = (await (
    await stack.request('GET', `/v1/jobs/${((await done.json()) as { id: string }).id}?wait=30`)
  ).json()) as { status: string };
  expect(finished.status).toBe('succeeded');
  const after = await scrape();
  expect(value(after, 'onejob_attempts{state="succeeded"}')).toBe(
    value(before, 'onejob_attempts{state="succeeded"}') + 1,
  );
  // The hanging attempt, running (or unknown once its timeout passed), is counted live.
  const inFlight = (text: string) =>
    value(text, 'onejob_attempts_in_flight{state="running"}') +
    value(text, 'onejob_attempts_in_flight{state="unknown"}');
  expect(inFlight(after) - inFlight(before)).toBe(1);
});

test('with ONEJOB_METRICS_TOKEN set, /metrics answers only that bearer token (401 problem+json otherwise)', async () => {
  const metricsToken = 'metrics-scraper-token-1';
  const api = await stack.startExtraApi({ ONEJOB_METRICS_TOKEN: metricsToken });
  try {
    for (const authorization of [undefined, 'Bearer wrong-token-123', `Basic ${metricsToken}`]) {
      const refused = await fetch(`${api.url}/metrics`, {
        headers: authorization ? { authorization } : {},
      });
      expect([authorization, refused.status]).toEqual([authorization, 401]);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await refused.json()).toMatchObject({ type: '/problems/unauthorized', status: 401 });
    }
    // An owner's API token is not the metrics token.
    expect(
      (await fetch(`${api.url}/metrics`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } }))
        .status,
    ).toBe(401);
    const allowed = await fetch(`${api.url}/metrics`, {
      headers: { authorization: `Bearer ${metricsToken}` },
    });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toMatch(/^onejob_race_events \d+$/m);
  } finally {
    await api.stop();
  }
});

/** An address of this machine's that is not loopback: a caller from it is not local. */
function nonLoopbackAddress(): string {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
  if (!address) throw new Error('this machine has no non-loopback IPv4 address to call from');
  return address;
}

test('without ONEJOB_METRICS_TOKEN, /metrics answers loopback callers only, judged by the caller and not the bind address', async () => {
  // Bound to every address, IPv6 and IPv4 alike: the caller's address is all that decides.
  const api = await stack.startExtraApi({ HOST: '::' });
  try {
    for (const local of [`http://127.0.0.1:${api.port}`, `http://[::1]:${api.port}`]) {
      const allowed = await fetch(`${local}/metrics`);
      expect([local, allowed.status]).toEqual([local, 200]);
      expect(await allowed.text()).toMatch(/^onejob_race_events \d+$/m);
    }
    const remote = `http://${nonLoopbackAddress()}:${api.port}`;
    const refused = await fetch(`${remote}/metrics`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/ONEJOB_METRICS_TOKEN/);
    // The rest of the API is unaffected.
    expect((await fetch(`${remote}/healthz`)).status).toBe(200);
  } finally {
    await api.stop();
  }
});

test('with ONEJOB_METRICS_TOKEN set, a caller from beyond loopback reads /metrics with the token and only with it', async () => {
  const metricsToken = 'metrics-scraper-token-2';
  const api = await stack.startExtraApi({ HOST: '0.0.0.0', ONEJOB_METRICS_TOKEN: metricsToken });
  try {
    const remote = `http://${nonLoopbackAddress()}:${api.port}`;
    expect((await fetch(`${remote}/metrics`)).status).toBe(401);
    const allowed = await fetch(`${remote}/metrics`, {
      headers: { authorization: `Bearer ${metricsToken}` },
    });
    expect(allowed.status).toBe(200);
  } finally {
    await api.stop();
  }
});

test('the worker exports the Temporal SDK runtime metrics', async () => {
  const address = stack.serviceEnv.ONEJOB_WORKER_METRICS_ADDRESS;
  const text = await (await fetch(`http://${address}/metrics`)).text();
  expect(text).toMatch(
    /temporal_workflow_task_schedule_to_start_latency|temporal_activity_execution_latency|temporal_worker_task_slots_available/,
  );
});
