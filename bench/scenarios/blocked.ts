import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cancelAsOperator, jsonHeaders } from '../support/ours';
import { profileWorkflows } from '../support/profile';
import { round2, waitUntil, type Scenario } from '../support/scenario';

/** The worker's default history limit before continue-as-new (ONEJOB_HISTORY_EVENT_LIMIT). */
const HISTORY_EVENT_LIMIT = 10_000;
const CREATE_CONCURRENCY = 16;
/** Jobs made blocked at a time. */
const WAVE = 100;
/** How often a blocked workflow looks at its attempt itself (ONEJOB_BLOCKED_SELF_LOOK_MS). */
const SELF_LOOK_MS = 3_600_000;

function residentMegabytes(pid: number, field = 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kilobytes = Number(
    new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN,
  );
  return round2(kilobytes / 1024);
}

/** What the worker holds, by the SDK's own gauges: cached workflow runs, busy task slots. */
async function workerHolds(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const holds: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match =
      /^temporal_(sticky_cache_size|worker_task_slots_used)(\{[^}]*\})?\s+([\d.e+-]+)$/.exec(line);
    if (!match) continue;
    const kind = /worker_type="(\w+)"/.exec(match[2] ?? '')?.[1];
    const queue = /task_queue="([^"]+)"/.exec(match[2] ?? '')?.[1];
    const name = [match[1], kind, queue].filter(Boolean).join(' ');
    holds[name] = (holds[name] ?? 0) + Number(match[3]);
  }
  return holds;
}

/**
 * Many jobs blocked in `unknown` at once, for a long while: each job's one charge went to a
 * payment provider that holds it unanswered (1 s attempt timeout; its status lookup says "still
 * processing"), so the job waits on the late answer or an operator. What it costs to hold them: the worker's memory, and the history each blocked job
 * grows per hour, so how long before it must continue as new.
 */
export const blockedScenario: Scenario = {
  name: 'blocked',
  async run({ env, smoke, log }) {
    const count = smoke ? 20 : Number(process.env.BENCH_BLOCKED_JOBS ?? 1_000);
    const holdMs = smoke ? 3_000 : Number(process.env.BENCH_BLOCKED_MINUTES ?? 10) * 60_000;
    const body = JSON.stringify({
      type: 'charge',
      input: { amountCents: 1_250, currency: 'EUR', account: 'acct-bench' },
      providers: ['pay-never-answers'],
    });
    const pid = env.stack.workerPid();
    if (pid === undefined) throw new Error('the worker is not its own process');
    const idleRss = residentMegabytes(pid);
    // Every charge is held: the provider says "still processing" to each status lookup.
    env.stack.simulator.inject({ route: 'charge', times: count, fault: { kind: 'hang' } });
    const ids: string[] = [];
    const create = async (): Promise<void> => {
      const answer = await fetch(`${env.stack.apiUrl}/v1/jobs`, {
        method: 'POST',
        headers: { ...jsonHeaders(), 'idempotency-key': `blocked-${randomUUID()}` },
        body,
      });
      if (answer.status !== 201) throw new Error(`create answered ${answer.status}`);
      ids.push(((await answer.json()) as { id: string }).id);
    };
    // The row measures holding blocked jobs, not a burst of them: they are made in waves, each
    // blocked before the next starts.
    while (ids.length < count) {
      const wave = Math.min(WAVE, count - ids.length);
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(CREATE_CONCURRENCY, wave) }, async () => {
          while (next < wave) {
            next += 1;
            await create();
          }
        }),
      );
      // Where the attempts stand, so that a wait that times out says what it saw.
      let seen = 'nothing yet';
      await waitUntil(
        `all ${ids.length} blocked jobs so far have an unknown attempt`,
        async () => {
          const { rows } = await env.stack.pool.query<{ state: string; n: number }>(
            `SELECT a.state, count(*)::int AS n FROM attempts a
              WHERE a.job_id = ANY($1::uuid[]) GROUP BY a.state ORDER BY a.state`,
            [ids],
          );
          seen = rows.map((row) => `${row.n} ${row.state}`).join(', ') || 'no attempts';
          return rows.find((row) => row.state === 'unknown')?.n === ids.length;
        },
        300_000,
        () => `attempts: ${seen}`,
      );
    }
    log(`blocked: ${count} jobs in unknown; holding them ${holdMs / 60_000} min`);

    const { rows } = await env.stack.pool.query<{ workflow_id: string }>(
      'SELECT workflow_id FROM jobs WHERE id = ANY($1::uuid[]) LIMIT 20',
      [ids],
    );
    // The workers' reconciler looks at each blocked attempt with growing pauses while its
    // workflow sleeps; the workflow's own looks (activities in its history) come hourly. Count
    // the events, and the looks among them.
    const histories = async (): Promise<{ events: number; checks: number }> => {
      const profile = await profileWorkflows(
        env.stack.temporal,
        rows.map((row) => row.workflow_id),
      );
      return { events: profile.historyEvents, checks: profile.activities };
    };
    const atStart = await histories();
    const started = Date.now();
    let peakRss = residentMegabytes(pid);
    while (Date.now() - started < holdMs) {
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      peakRss = Math.max(peakRss, residentMegabytes(pid));
    }
    const atEnd = await histories();
    const holding = {
      'worker RSS at the end, MB': residentMegabytes(pid),
      'of it anonymous memory, MB': residentMegabytes(pid, 'RssAnon'),
      ...(await workerHolds(env.workerMetricsUrl).catch((error: unknown) => ({
        [`SDK metrics unreadable: ${String(error)}`]: 0,
      }))),
    };
    const hours = (Date.now() - started) / 3_600_000;
    // The goals: 300 MB with 1,000 blocked jobs, 1 GB with 10,000.
    const goalMb = count >= 10_000 ? 1_024 : 300;
    const eventsPerHour = (atEnd.events - atStart.events) / hours;
    const looks = atEnd.checks - atStart.checks;
    // A look of its own adds about a dozen events (activity, workflow tasks, timer): the figure
    // measured when the hold saw one, else that estimate.
    const eventsPerLook = looks > 0 ? (atEnd.events - atStart.events) / looks : 12;
    const steadyEventsPerHour = eventsPerLook * (3_600_000 / SELF_LOOK_MS);
    const daysToContinueAsNew = (HISTORY_EVENT_LIMIT - atEnd.events) / steadyEventsPerHour / 24;
    // Cancelled so that the rows after this one do not share the engine with them; several at
    // once, since one at a time took half an hour for 10,000.
    let cancelled = 0;
    await Promise.all(
      Array.from({ length: CREATE_CONCURRENCY }, async () => {
        while (cancelled < ids.length) {
          const id = ids[cancelled++]!;
          await cancelAsOperator(env.stack.apiUrl, id);
        }
      }),
    );
    return {
      comparisons: [
        {
          row: 'blocked',
          measure: `worker RSS (peak) with ${count} jobs in unknown for ${round2(holdMs / 60_000)} min`,
          ours: peakRss,
          unit: 'MB',
          goal: `≤ ${goalMb} MB`,
          met: peakRss <= goalMb,
        },
      ],
      details: {
        'blocked jobs': count,
        'worker RSS before them, MB': idleRss,
        'what the worker holds at the end': holding,
        'history events per blocked job when all were blocked': round2(atStart.events),
        'history events per blocked job at the end': round2(atEnd.events),
        'history events per blocked job per hour, measured over the hold': round2(eventsPerHour),
        'looks of its own per blocked job over the hold': round2(looks),
        'history events per blocked job per hour, at one look of its own an hour':
          round2(steadyEventsPerHour),
        'days until continue-as-new (10,000 events), at that pace': round2(daysToContinueAsNew),
      },
    };
  },
};
