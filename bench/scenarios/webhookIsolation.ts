import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULTS } from '../../src/domain/defaults';
import { OTHER_TOKEN } from '../../test/support/identities';
import { SilentReceiver } from '../../tools/webhooks/silentReceiver';
import { BENCH_TOKEN } from '../support/environment';
import { Latencies } from '../support/latency';
import { jsonHeaders, summarizeBody } from '../support/ours';
import { round2, waitUntil, type Scenario } from '../support/scenario';

/** How long the victim waits for an event before counting it as never arrived. */
const ARRIVAL_TIMEOUT_MS = 120_000;

/** A receiver that answers 204 at once and tells whoever waits on a job when its event came. */
class CountingReceiver {
  private readonly waiting = new Map<string, (at: number) => void>();
  private readonly arrived = new Map<string, number>();
  private constructor(private readonly server: Server) {}

  static async start(): Promise<CountingReceiver> {
    const receiver = new CountingReceiver(createServer());
    receiver.server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const at = performance.now();
        const { data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          data: { id: string };
        };
        if (!receiver.arrived.has(data.id)) {
          receiver.arrived.set(data.id, at);
          receiver.waiting.get(data.id)?.(at);
        }
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** When the job's event arrived (performance.now()), or undefined after `timeoutMs`. */
  async arrival(jobId: string, timeoutMs: number): Promise<number | undefined> {
    const seen = this.arrived.get(jobId);
    if (seen !== undefined) return seen;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(jobId);
        resolve(undefined);
      }, timeoutMs);
      this.waiting.set(jobId, (at) => {
        clearTimeout(timer);
        this.waiting.delete(jobId);
        resolve(at);
      });
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Creates a summarize job as the token's owner and long-polls it to its end: its id and status. */
async function runJob(apiUrl: string, token: string, prefix: string) {
  const created = await fetch(`${apiUrl}/v1/jobs`, {
    method: 'POST',
    headers: { ...jsonHeaders(token), 'idempotency-key': `${prefix}-${randomUUID()}` },
    body: summarizeBody(),
  });
  if (created.status !== 201) throw new Error(`create answered ${created.status}`);
  const job = (await created.json()) as { id: string; status: string };
  let status = job.status;
  while (!['succeeded', 'failed', 'cancelled'].includes(status)) {
    const polled = await fetch(`${apiUrl}/v1/jobs/${job.id}?wait=30`, {
      headers: jsonHeaders(token),
    });
    if (!polled.ok) throw new Error(`GET job answered ${polled.status}`);
    status = ((await polled.json()) as { status: string }).status;
  }
  return { id: job.id, status };
}

async function registerEndpoint(apiUrl: string, token: string, url: string): Promise<Response> {
  return fetch(`${apiUrl}/v1/webhooks`, {
    method: 'POST',
    headers: jsonHeaders(token),
    body: JSON.stringify({ url }),
  });
}

async function deleteEndpoint(apiUrl: string, token: string, id: string): Promise<void> {
  const answer = await fetch(`${apiUrl}/v1/webhooks/${id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token}` },
  });
  if (answer.status !== 204) throw new Error(`DELETE /v1/webhooks/${id} answered ${answer.status}`);
}

/**
 * One owner's webhooks turned against the others: an abusive owner registers the cap's worth of
 * endpoints at a receiver that never answers (one more is refused) and ends jobs as fast as it
 * makes them, each with an event for every endpoint. Meanwhile another owner runs jobs with one
 * endpoint that answers at once. Its job time and event arrival, beside the same load with no
 * abusive owner (alone), and with the abusive owner's same jobs but no endpoints (so the cost of
 * its jobs themselves on two cores shows apart from that of its webhooks).
 */
export const webhookIsolationScenario: Scenario = {
  name: 'webhook isolation',
  async run({ env, smoke, log }) {
    const apiUrl = env.stack.apiUrl;
    const phaseMs = smoke ? 3_000 : 60_000;
    const victimClients = smoke ? 2 : 4;
    const abusiveClients = smoke ? 2 : 4;
    const endpointsCap = DEFAULTS.webhookEndpointsPerOwner;
    const receiver = await CountingReceiver.start();
    const silent = await SilentReceiver.start();
    const unexpected: Record<string, number> = {};
    const tally = (what: string) => (unexpected[what] = (unexpected[what] ?? 0) + 1);
    const victimEndpoint = await registerEndpoint(apiUrl, BENCH_TOKEN, receiver.url);
    if (victimEndpoint.status !== 201)
      throw new Error(`registering the victim's endpoint answered ${victimEndpoint.status}`);
    const victimEndpointId = ((await victimEndpoint.json()) as { id: string }).id;
    const abusiveEndpoints: string[] = [];

    /** The abusive owner's closed loop: jobs made and ended one after another, until `stop`. */
    const abusiveLoad = () => {
      let running = true;
      let ended = 0;
      const started = performance.now();
      const clients = Array.from({ length: abusiveClients }, async () => {
        while (running) {
          const job = await runJob(apiUrl, OTHER_TOKEN, 'webhook-abusive');
          if (job.status !== 'succeeded') tally(`abusive job ${job.status}`);
          ended += 1;
        }
      });
      return {
        async stop() {
          running = false;
          await Promise.all(clients);
          return { ended, seconds: (performance.now() - started) / 1000 };
        },
      };
    };

    /** The victim's jobs for one phase: how long each took to end, and its event to arrive. */
    const victim = async (phase: string) => {
      const ended = new Latencies();
      const delivered = new Latencies();
      const until = performance.now() + phaseMs;
      await Promise.all(
        Array.from({ length: victimClients }, async () => {
          while (performance.now() < until) {
            const t0 = performance.now();
            const job = await runJob(apiUrl, BENCH_TOKEN, `webhook-victim-${phase}`);
            ended.recordMs(performance.now() - t0);
            if (job.status !== 'succeeded') tally(`victim job ${job.status}`);
            const at = await receiver.arrival(job.id, ARRIVAL_TIMEOUT_MS);
            if (at === undefined) tally('victim event never arrived');
            else delivered.recordMs(at - t0);
          }
        }),
      );
      return { ended, delivered };
    };

    try {
      const alone = await victim('alone');
      log(`webhook isolation: alone, ${alone.ended.count} jobs, p50 ${alone.ended.ms(50)} ms`);

      // The abusive owner's jobs, with no endpoints yet: what its job load costs by itself.
      const plainLoad = abusiveLoad();
      const busy = await victim('busy');
      const plain = await plainLoad.stop();

      for (let n = 0; n < endpointsCap; n += 1) {
        const answer = await registerEndpoint(apiUrl, OTHER_TOKEN, silent.url(`hook-${n}`));
        if (answer.status !== 201) throw new Error(`registering answered ${answer.status}`);
        abusiveEndpoints.push(((await answer.json()) as { id: string }).id);
      }
      const past = await registerEndpoint(apiUrl, OTHER_TOKEN, silent.url('one-too-many'));
      if (past.status !== 409) tally(`endpoint past the cap answered ${past.status}`);
      const abusive = abusiveLoad();
      // Measured once its tries are out and held by the receiver that never answers.
      await waitUntil('the abusive owner has tries held open', async () => silent.open > 0);
      const during = await victim('abusive');
      const load = await abusive.stop();
      const { rows } = await env.stack.pool.query<{ deliveries: number; events: number }>(
        `SELECT count(*)::int AS deliveries, count(DISTINCT job_id)::int AS events
           FROM webhook_deliveries WHERE endpoint_id = ANY ($1::uuid[])`,
        [abusiveEndpoints],
      );
      const written = rows[0]!;
      const heldOpenAtEnd = silent.open;

      const ratio = (a: Latencies, b: Latencies, p: number) => round2(a.ms(p) / b.ms(p));
      log(
        `webhook isolation: job end p50 ${during.ended.ms(50)} ms abusive vs ${alone.ended.ms(50)} ms alone (${ratio(during.ended, alone.ended, 50)}×), event arrival p50 ${during.delivered.ms(50)} vs ${alone.delivered.ms(50)} ms (${ratio(during.delivered, alone.delivered, 50)}×); the abusive owner ended ${round2(load.ended / load.seconds)} jobs/s, ${written.deliveries} deliveries to ${endpointsCap} endpoints that never answer`,
      );
      const comparisons = (
        [
          ['job end', 'ended'],
          ['event arrival', 'delivered'],
        ] as const
      ).flatMap(([what, key]) =>
        [50, 99].map((p) => ({
          row: 'webhook isolation',
          measure: `another owner's p${p} ${what}, an abusive owner's ${endpointsCap} endpoints never answering vs alone`,
          ours: during[key].ms(p),
          baseline: alone[key].ms(p),
          unit: 'ms',
          ratio: ratio(during[key], alone[key], p),
          goal:
            p === 50 ? 'about what the abusive owner’s jobs cost without endpoints' : 'reported',
        })),
      );
      for (const [what, key] of [
        ['job end', 'ended'],
        ['event arrival', 'delivered'],
      ] as const)
        comparisons.push({
          row: 'webhook isolation',
          measure: `another owner's p50 ${what}, the abusive owner's same jobs with no endpoints vs alone`,
          ours: busy[key].ms(50),
          baseline: alone[key].ms(50),
          unit: 'ms',
          ratio: ratio(busy[key], alone[key], 50),
          goal: 'reported',
        });
      const phases = {
        alone,
        'with the abusive owner’s jobs, no endpoints': busy,
        'with the abusive owner': during,
      };
      return {
        comparisons,
        details: {
          unexpected,
          'abusive owner’s load': {
            'jobs ended': load.ended,
            'jobs ended per second': round2(load.ended / load.seconds),
            'jobs ended per second without endpoints': round2(plain.ended / plain.seconds),
            endpoints: endpointsCap,
            'deliveries written': written.deliveries,
            'events written': written.events,
            'deliveries per event': round2(written.deliveries / Math.max(1, written.events)),
            'tries the silent receiver was sent': silent.requests,
            'tries held open at once, most': silent.mostOpen,
            'tries held open at the end': heldOpenAtEnd,
          },
          ...Object.fromEntries(
            Object.entries(phases).map(([phase, result]) => [
              phase,
              {
                jobs: result.ended.count,
                'job end p50 ms': result.ended.ms(50),
                'job end p99 ms': result.ended.ms(99),
                'event arrival p50 ms': result.delivered.ms(50),
                'event arrival p99 ms': result.delivered.ms(99),
              },
            ]),
          ),
        },
        latencyCurves: Object.entries(phases).map(([phase, result]) => ({
          chart: 'another owner’s event arrival, an abusive owner’s webhooks never answering',
          series: phase,
          points: result.delivered.cdf(),
        })),
      };
    } finally {
      // The rows after this one share the owner and the worker: nothing of this row stays.
      for (const id of abusiveEndpoints) await deleteEndpoint(apiUrl, OTHER_TOKEN, id);
      await deleteEndpoint(apiUrl, BENCH_TOKEN, victimEndpointId);
      await silent.stop();
      await receiver.stop();
    }
  },
};
