import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundle,
} from '@temporalio/worker';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { retrySettings } from '../../src/domain/retries';
import { lateResultTimeoutMs, notFoundGraceMs } from '../../src/providers/provider';
import { doesWork } from '../simulator/faults';
import type { TemporalEngineKind } from '../stack/temporalEngine';
import { checkMoney, setCampaignMoneyRules, type MoneyLooks } from './budgets';
import { ChaosClient } from './client';
import { checkInvariants, isClientTimeout, type ReplayLooks, type Violation } from './invariants';
import { Journal, type Partition, type ProcessFault } from './journal';
import type { LinkCounts, LinkFault } from './linkProxy';
import { serverPausesWorkflows } from './nemesis';
import {
  OPERATION_WEIGHTS,
  requestsOf,
  runOpening,
  runOperation,
  SHORT_WINDOW_REPLAY_PROVIDER,
  type Actors,
  type BeginHold,
  type OperationKind,
} from './operations';
import type { ChildJobOrder } from './parentWorkflow';
import { Random } from './random';
import { settleEverything } from './settle';
import { PAYMENT_PROVIDER_SIMULATORS, startChaosStack, type ChaosStack } from './stack';
import { World, type KeyRecord } from './world';

export interface CampaignOptions {
  seed: number;
  /**
   * Only the opening: each quirk aimed at a job of its own, then settle and check, with no
   * seeded traffic. What a planted bug is caught by in `npm test`.
   */
  openingOnly?: boolean;
  /** Stop drawing operations after this many … */
  ops?: number;
  /** … or after this long, whichever comes first (at least one of the two). */
  minutes?: number;
  /** Lanes drawing operations at once. */
  concurrency: number;
  /** Seconds between process faults (each drawn between this and twice this); 0 = none. */
  faultEverySeconds: number;
  /** Folder for the journal, the stack's state and logs. */
  dir: string;
  /** The compiled service to run (a throwaway build with a planted bug, say). */
  buildDir?: string;
  temporalAddress?: string;
  databaseUrl?: string;
  /** The Temporal engine the stack runs (when no address is given): default the dev server. */
  engine?: TemporalEngineKind;
  /** With the production engine: Temporal's state on our PostgreSQL server, or apart. */
  temporalPostgres?: 'shared' | 'apart';
  /** How long quiescence may take before what is still open counts as stuck. */
  settleTimeoutMs?: number;
  log: (line: string) => void;
}

export interface CampaignReport {
  seed: number;
  engine: TemporalEngineKind;
  /** Where the production engine kept its state: on our PostgreSQL server, or apart. */
  temporalPostgres?: 'shared' | 'apart';
  trafficMs: number;
  settleMs: number;
  operations: Record<string, number>;
  requests: number;
  statuses: Record<string, number>;
  providerFaults: Record<string, number>;
  processFaults: ProcessFault[];
  jobsByState: Record<string, number>;
  raceEvents: number;
  /** Keys operators released (each let its key make a job of the next generation). */
  keyReleases: number;
  operatorSettlements: number;
  /** Resolves the lanes' operators made while traffic ran (operator_resolve), racing the service. */
  operatorSettlementsInTraffic: number;
  /** The replay provider's looks, and what settled the attempts they looked at (invariant 11). */
  replayLooks: ReplayLooks;
  /** What budgets and price ceilings did (invariant 12). */
  money: MoneyLooks;
  /** Whether the server paused workflows, and what the operator nemesis's pauses did. */
  pauses: World['pauses'] & { serverPauses: boolean };
  workflowsChecked: number;
  violations: Array<Violation & { journal: Array<Record<string, unknown>> }>;
  journalFile: string;
}

const PAYMENT_PROVIDERS = Object.keys(PAYMENT_PROVIDER_SIMULATORS);

/** The process faults a stack can take, in the order a seed draws them. */
function processFaultKinds(stack: ChaosStack): Array<ProcessFault['kind']> {
  const kinds: Array<ProcessFault['kind']> = [];
  if (stack.can.killWorker) kinds.push('kill_worker', 'kill_worker_after_admission');
  if (stack.can.killApi) kinds.push('kill_api');
  if (stack.can.restartTemporal) kinds.push('restart_temporal');
  if (stack.can.restartPostgres) kinds.push('restart_postgres');
  if (stack.can.restartTemporalPostgres) kinds.push('restart_temporal_postgres');
  if (stack.links.size > 0) kinds.push('partition');
  return kinds;
}

/**
 * How long a partition holds: past every timeout that matters here (a provider's 3 s call and
 * not-found grace, a pool's connection wait, Temporal's sticky queue's 10 s, the 15 s late-result
 * window), short of the client's 30 s.
 */
const PARTITION_MS = { min: 5_000, max: 25_000 } as const;
/** How long a process whose link healed may take to say it is ready again. */
const RECOVERY_MS = 60_000;

function drawLinkFault(random: Random): LinkFault {
  const kind = random.pick(['cut', 'blackhole', 'half_open', 'slow'] as const);
  if (kind === 'half_open')
    return { kind, blocked: random.pick(['to_server', 'to_client'] as const) };
  if (kind === 'slow')
    return {
      kind,
      latencyMs: random.int(200, 1_500),
      ...(random.chance(0.5) ? { bytesPerSecond: 32 * 1024 } : {}),
    };
  return { kind };
}

/**
 * Breaks one link while `hold` runs, notes what its near side said just before the heal, heals
 * it, and waits until that side is ready again by itself (a restart would be a finding: the
 * process must come back on its own, and an exit shows among the unexpected ones). Journaled as a
 * process fault, whose window spans the partition and the recovery.
 */
async function partition(
  stack: ChaosStack,
  journal: Journal,
  linkName: string,
  fault: LinkFault,
  hold: () => Promise<void>,
  log: (line: string) => void,
): Promise<void> {
  const link = stack.links.get(linkName);
  if (!link) throw new Error(`there is no link ${linkName}`);
  const nearSide = linkName.split('→')[0]!;
  const journaled = journal.processFault({
    kind: 'partition',
    target: linkName,
    at: journal.now(),
  });
  log(
    `process fault at ${(journaled.at / 1000).toFixed(1)} s: partition ${linkName} (${JSON.stringify(fault)})`,
  );
  const before = link.counts();
  const broken = Date.now();
  let saw: Awaited<ReturnType<ChaosStack['readiness']>>;
  let after: LinkCounts;
  try {
    await link.breakWith(fault);
    await hold();
    saw = await stack.readiness(nearSide);
  } finally {
    after = link.counts();
    await link.heal();
  }
  const healedAt = Date.now();
  const seen: Partition = {
    fault,
    heldMs: healedAt - broken,
    during: {
      accepted: after.accepted - before.accepted,
      reset: after.reset - before.reset,
      bytesToServer: after.bytesToServer - before.bytesToServer,
      bytesToClient: after.bytesToClient - before.bytesToClient,
      held: after.held,
    },
    nearSideSaw: saw ? `${saw.status} ${saw.body}` : 'no answer within 5 s',
  };
  journaled.partition = seen;
  try {
    for (;;) {
      const now = await stack.readiness(nearSide);
      if (now?.status === 200) {
        seen.readyAfterHealMs = Date.now() - healedAt;
        break;
      }
      if (Date.now() - healedAt > RECOVERY_MS)
        throw new Error(
          `${nearSide} was not ready ${RECOVERY_MS / 1000} s after its link healed: ${now ? `${now.status} ${now.body}` : 'no answer'}`,
        );
      await sleep(250);
    }
  } catch (error) {
    journaled.error = (error as Error).message;
    log(`partition ${linkName} failed: ${journaled.error}`);
  }
  journaled.backAt = journal.now();
  journal.processBack(journaled);
}

async function injectProcessFault(
  stack: ChaosStack,
  journal: Journal,
  kind: ProcessFault['kind'],
  random: Random,
  log: (line: string) => void,
): Promise<void> {
  const index = random.int(0, 1);
  if (kind === 'partition') {
    const linkName = random.pick([...stack.links.keys()]);
    const linkFault = drawLinkFault(random);
    const heldMs = random.int(PARTITION_MS.min, PARTITION_MS.max);
    await partition(stack, journal, linkName, linkFault, () => sleep(heldMs), log);
    return;
  }
  // Right after an admission wrote its job's attempt 1: its workflow task may not have
  // completed yet, so the admission runs again on the other worker and must reuse the attempt.
  // Either worker may hold that job: a kill of the other one is an ordinary kill.
  const after =
    kind === 'kill_worker_after_admission'
      ? await untilAttemptOneWritten(stack.databaseUrl, 20_000)
      : undefined;
  const target =
    kind === 'kill_worker' || kind === 'kill_worker_after_admission'
      ? `worker-${index}`
      : kind === 'kill_api'
        ? `api-${index}`
        : kind === 'restart_temporal'
          ? 'temporal'
          : kind === 'restart_temporal_postgres'
            ? 'temporal-postgres'
            : 'postgres';
  const fault = journal.processFault({
    kind,
    target,
    at: journal.now(),
    ...(after ? { after } : {}),
  });
  log(`process fault at ${(fault.at / 1000).toFixed(1)} s: ${kind} ${target}`);
  try {
    if (kind === 'kill_worker' || kind === 'kill_worker_after_admission')
      await stack.killWorker(index);
    else if (kind === 'kill_api') await stack.killApi(index);
    else if (kind === 'restart_temporal') await stack.restartTemporal();
    else if (kind === 'restart_temporal_postgres') await stack.restartTemporalPostgres();
    else await stack.restartPostgres();
  } catch (error) {
    fault.error = (error as Error).message;
    log(`process fault ${kind} ${target} failed: ${fault.error}`);
  }
  fault.backAt = journal.now();
  journal.processBack(fault);
}

/** The channel the campaign's own trigger announces each attempt 1 on (see announceAttemptOne). */
const ATTEMPT_ONE_CHANNEL = 'chaos_attempt_one';

/**
 * Installs, in the campaign's own database, a trigger that announces every attempt 1 as its
 * row commits: the moment a kill right after admission waits for. Instrumentation of the
 * campaign's, never part of the service's schema.
 */
async function announceAttemptOne(db: pg.Pool): Promise<void> {
  await db.query(`
    CREATE OR REPLACE FUNCTION chaos_announce_attempt_one() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${ATTEMPT_ONE_CHANNEL}', NEW.id);
      RETURN NULL;
    END $$;
    DROP TRIGGER IF EXISTS chaos_announce_attempt_one ON attempts;
    CREATE TRIGGER chaos_announce_attempt_one AFTER INSERT ON attempts
      FOR EACH ROW WHEN (NEW.seq = 1) EXECUTE FUNCTION chaos_announce_attempt_one();`);
}

/**
 * Polls one row about a job until `reached` holds, for at most 30 s. Giving up is not an error:
 * on a slow machine the fault queued for this job then meets the next call of its route, which
 * the campaign tolerates.
 */
async function untilJobRow<Row extends pg.QueryResultRow>(
  db: pg.Pool,
  jobId: string,
  sql: string,
  reached: (row: Row | undefined) => boolean,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { rows } = await db.query<Row>(sql, [jobId]);
    if (reached(rows[0])) return;
    await sleep(100);
  }
}

/** Until a job's first provider call has left, so the fault queued for it meets no other job. */
const untilFirstCallLeft = (db: pg.Pool, jobId: string): Promise<void> =>
  untilJobRow<{ started: boolean }>(
    db,
    jobId,
    'SELECT started_at IS NOT NULL AS started FROM attempts WHERE job_id = $1 AND seq = 1',
    (row) => row?.started === true,
  );

/** Until a job has two attempts and every call it made has ended. */
const untilCallsEnded = (db: pg.Pool, jobId: string): Promise<void> =>
  untilJobRow<{ n: number; open: number }>(
    db,
    jobId,
    `SELECT count(*)::int AS n,
            count(*) FILTER (WHERE started_at IS NOT NULL AND call_ended_at IS NULL)::int AS open
       FROM attempts WHERE job_id = $1`,
    (row) => row !== undefined && row.n >= 2 && row.open === 0,
  );

/** Until a job's row has ended. */
const untilJobEnded = (db: pg.Pool, jobId: string): Promise<void> =>
  untilJobRow<{ ended: boolean }>(
    db,
    jobId,
    'SELECT terminal_status IS NOT NULL AS ended FROM jobs WHERE id = $1',
    (row) => row?.ended === true,
  );

/**
 * Until a look found an attempt's key window over while the attempt was still unknown: its kept
 * request is dropped (migration 0025), and no replay may be sent any more. False once the
 * attempt is settled first (a build that replays past the window, planted `replay-after-window`,
 * gets the stored answer back), or after 30 s.
 */
async function untilReplayWindowClosed(db: pg.Pool, attemptId: string): Promise<boolean> {
  let closed = false;
  await untilJobRow<{ closed: boolean; settled: boolean }>(
    db,
    attemptId,
    `SELECT s.body IS NULL AND a.state = 'unknown' AS closed,
            a.state NOT IN ('starting', 'running', 'unknown') AS settled
       FROM attempt_sends s JOIN attempts a ON a.id = s.attempt_id WHERE s.attempt_id = $1`,
    (row) => (closed = row?.closed === true) || row?.settled === true,
  );
  return closed;
}

/** The advisory lock a held begin waits for (see holdBegins); any number no service uses. */
const BEGIN_HOLD_LOCK = 54_054;

/**
 * Installs, in the campaign's own database, a hold of the next provider call's begin (the
 * statement that moves an attempt `starting → running` and draws its call token, recognized by
 * its text): armed by a row in `chaos_begin_holds`, the first begin after it waits for an advisory
 * lock the campaign holds, before it has touched any row, as a slow database would keep it; any
 * other statement goes by. Instrumentation of the campaign's, never part of the service's schema:
 * the race of issue 54 (a run terminated while its call's begin waits, and the call executed again
 * by the run that takes the job up) needs that moment, and the workers are other processes.
 */
async function installBeginHold(db: pg.Pool): Promise<void> {
  await db.query(`
    CREATE TABLE IF NOT EXISTS chaos_begin_holds (armed boolean PRIMARY KEY DEFAULT true);
    CREATE OR REPLACE FUNCTION chaos_hold_begin() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
      taken integer;
    BEGIN
      IF position('call_token = CASE' in current_query()) = 0 THEN
        RETURN NULL;
      END IF;
      DELETE FROM chaos_begin_holds
       WHERE ctid IN (SELECT ctid FROM chaos_begin_holds FOR UPDATE SKIP LOCKED);
      GET DIAGNOSTICS taken = ROW_COUNT;
      IF taken > 0 THEN
        PERFORM pg_advisory_xact_lock(${BEGIN_HOLD_LOCK});
      END IF;
      RETURN NULL;
    END $$;
    DROP TRIGGER IF EXISTS chaos_hold_begin ON attempts;
    CREATE TRIGGER chaos_hold_begin BEFORE UPDATE ON attempts
      FOR EACH STATEMENT EXECUTE FUNCTION chaos_hold_begin();`);
}

/** Arms the hold of the next begin (installBeginHold), the lock taken first on a client of its own. */
async function holdNextBegin(databaseUrl: string, db: pg.Pool): Promise<BeginHold> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  holder.on('error', () => undefined);
  await holder.connect();
  await holder.query('SELECT pg_advisory_lock($1)', [BEGIN_HOLD_LOCK]);
  await db.query('INSERT INTO chaos_begin_holds DEFAULT VALUES ON CONFLICT DO NOTHING');
  let released = false;
  return {
    async reached(ms) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'
              AND wait_event = 'advisory'`,
        );
        if (rows[0]!.n > 0) return true;
        await sleep(50);
      }
      return false;
    },
    async release() {
      if (released) return;
      released = true;
      // The lock first: a held begin's transaction keeps the armed row it took until it goes on.
      await holder.query('SELECT pg_advisory_unlock($1)', [BEGIN_HOLD_LOCK]).catch(() => undefined);
      await holder.end().catch(() => undefined);
      await db
        .query(
          `DELETE FROM chaos_begin_holds
            WHERE ctid IN (SELECT ctid FROM chaos_begin_holds FOR UPDATE SKIP LOCKED)`,
        )
        .catch(() => undefined);
    },
  };
}

/** Until an attempt's charge or chat request has reached a simulator; false after 20 s. */
async function untilRequested(simulatorUrls: string[], attemptId: string): Promise<boolean> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    for (const url of simulatorUrls)
      if ((await requestsOf(url)).some((r) => doesWork(r.route) && r.idempotencyKey === attemptId))
        return true;
    await sleep(100);
  }
  return false;
}

/**
 * Until an execution of an attempt's call that found it begun by another has said so in its
 * worker's log (`call_begun_elsewhere`), and then, for at most 2 s, until whatever it writes has
 * been written (a build that writes over the call ends it); false when it said nothing in 20 s.
 */
async function untilBeginLost(stack: ChaosStack, db: pg.Pool, attemptId: string): Promise<boolean> {
  const said = (): boolean =>
    stack
      .serviceOutput()
      .split('\n')
      .some((line) => line.includes('call_begun_elsewhere') && line.includes(attemptId));
  const deadline = Date.now() + 20_000;
  while (!said()) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  const settled = Date.now() + 2_000;
  while (Date.now() < settled) {
    const { rows } = await db.query<{ over: boolean }>(
      `SELECT call_ended_at IS NOT NULL OR state NOT IN ('starting', 'running') AS over
         FROM attempts WHERE id = $1`,
      [attemptId],
    );
    if (rows[0]?.over) break;
    await sleep(100);
  }
  return true;
}

/** The provider calls out now: attempts `running` on open jobs (what the nemesis picks from). */
async function callsInFlight(db: pg.Pool) {
  const { rows } = await db.query<{ id: string; job_id: string; workflow_id: string }>(
    `SELECT a.id, a.job_id, j.workflow_id FROM attempts a JOIN jobs j ON j.id = a.job_id
      WHERE a.state = 'running' AND j.terminal_status IS NULL`,
  );
  return rows.map((row) => ({ attemptId: row.id, jobId: row.job_id, workflowId: row.workflow_id }));
}

/** The id of the next attempt 1 written, once it has committed; undefined after `ms` without one. */
async function untilAttemptOneWritten(
  databaseUrl: string,
  ms: number,
): Promise<string | undefined> {
  const listener = new pg.Client({ connectionString: databaseUrl });
  // PostgreSQL may be down or restarting: then the kill strikes at the deadline instead.
  listener.on('error', () => undefined);
  try {
    await listener.connect();
    await listener.query(`LISTEN ${ATTEMPT_ONE_CHANNEL}`);
    return await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), ms);
      listener.on('notification', (message) => {
        clearTimeout(timer);
        resolve(message.payload);
      });
    });
  } catch {
    return undefined;
  } finally {
    await listener.end().catch(() => undefined);
  }
}

/**
 * One campaign: start the stack, run seeded traffic and provider faults in `concurrency` lanes
 * while a fault lane kills and restarts processes, settle, then check every invariant.
 */
export async function runCampaign(options: CampaignOptions): Promise<CampaignReport> {
  if (!options.openingOnly && options.ops === undefined && options.minutes === undefined)
    throw new Error('give --ops, --minutes, both, or the opening only');
  mkdirSync(options.dir, { recursive: true });
  const journal = new Journal(path.join(options.dir, 'journal.jsonl'));
  const world = new World(journal);
  const root = new Random(options.seed);
  journal.write({ event: 'start', seed: options.seed, options: { ...options, log: undefined } });

  // Bundled while the stack starts: webpack takes seconds.
  const parentBundle = bundleParentWorkflow();
  parentBundle.catch(() => undefined);
  const stack = await startChaosStack({
    dir: path.join(options.dir, 'stack'),
    buildDir: options.buildDir,
    log: options.log,
    temporalAddress: options.temporalAddress,
    databaseUrl: options.databaseUrl,
    engine: options.engine,
    temporalPostgres: options.temporalPostgres,
    // Hedges start soon, so hedged jobs race often and late losers are common.
    serviceEnv: { ONEJOB_HEDGE_DELAY_MS: '150' },
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection, namespace: stack.namespace });
  const db = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
  // The database restarts under the campaign too: a dropped idle connection is not our failure.
  db.on('error', () => undefined);
  await announceAttemptOne(db);
  await installBeginHold(db);
  await setCampaignMoneyRules(db, stack);
  const parents = await startParentWorker(stack, await parentBundle);
  const actors: Actors = {
    client: new ChaosClient(stack, journal, world),
    journal,
    world,
    temporal,
    taskQueue: stack.taskQueue,
    owners: stack.owners,
    operatorToken: stack.operatorToken,
    callbackSecrets: stack.callbackSecrets,
    simulatorUrls: stack.simulatorUrls,
    paymentProviders: PAYMENT_PROVIDERS,
    paymentSimulators: PAYMENT_PROVIDER_SIMULATORS,
    startChildJob: parents.start,
    callsInFlight: () => callsInFlight(db),
    pausesWorkflows: await serverPausesWorkflows(temporal),
  };

  try {
    const deadline =
      options.minutes === undefined ? Infinity : Date.now() + options.minutes * 60_000;
    let drawn = await runOpening(actors, {
      untilCalled: (jobId) => untilFirstCallLeft(db, jobId),
      untilRaced: (jobId) => untilCallsEnded(db, jobId),
      untilEnded: (jobId) => untilJobEnded(db, jobId),
      untilReplayWindowClosed: (attemptId) => untilReplayWindowClosed(db, attemptId),
      partitioned: (link, fault, work) => partition(stack, journal, link, fault, work, options.log),
      holdNextBegin: () => holdNextBegin(stack.databaseUrl, db),
      untilRequested: (attemptId) => untilRequested(stack.simulatorUrls, attemptId),
      untilBeginLost: (attemptId) => untilBeginLost(stack, db, attemptId),
    });
    options.log(`opening done: ${drawn} jobs, each meeting a provider quirk aimed at it`);
    // Traffic lasts at least until every kind of process fault has struck once.
    let firstRoundDone = options.faultEverySeconds <= 0;
    const more = () =>
      !options.openingOnly &&
      (!firstRoundDone ||
        (Date.now() < deadline && (options.ops === undefined || drawn < options.ops)));
    const trafficStarted = Date.now();
    let trafficDone = false;

    const lanes = Array.from({ length: options.concurrency }, async (_, lane) => {
      const random = root.fork(lane);
      while (more()) {
        const op = drawn++;
        const kind: OperationKind = random.weighted(OPERATION_WEIGHTS);
        try {
          await runOperation(actors, op, kind, random);
        } catch (error) {
          journal.write({ event: 'op-error', op, kind, error: (error as Error).message });
        }
      }
    });
    const faultLane = (async () => {
      if (options.faultEverySeconds <= 0) return;
      const random = root.fork(10_000);
      const kinds = processFaultKinds(stack);
      // Every kind once, in a seeded order, then any kind.
      if (kinds.length === 0) {
        firstRoundDone = true;
        return;
      }
      const firstRound = random.shuffle(kinds);
      for (let round = 0; ; round++) {
        if (round >= firstRound.length) firstRoundDone = true;
        const gap =
          options.faultEverySeconds * 1000 * (round < firstRound.length ? 1 : 1 + random.next());
        const until = Date.now() + gap;
        while (!trafficDone && Date.now() < until) await sleep(200);
        if (firstRoundDone && !more()) return;
        if (trafficDone) return;
        // After the first round, half the faults are partitions: sixteen links, four ways to
        // break each, against five kinds of crash.
        const kind =
          firstRound[round] ??
          (kinds.includes('partition') && random.chance(0.5) ? 'partition' : random.pick(kinds));
        await injectProcessFault(stack, journal, kind, random, options.log);
      }
    })();
    const progress = setInterval(() => {
      options.log(
        `traffic: ${drawn} operations, ${journal.exchanges.length} requests, ${journal.processFaults.length} process faults`,
      );
    }, 15_000);
    await Promise.all(lanes);
    trafficDone = true;
    await faultLane;
    clearInterval(progress);
    const trafficMs = Date.now() - trafficStarted;
    options.log(
      `traffic done: ${drawn} operations in ${(trafficMs / 1000).toFixed(1)} s; settling`,
    );

    // Quiescence: no more injected provider faults; operators settle what stays unknown.
    for (const url of stack.simulatorUrls)
      await fetch(`${url}/_simulator/faults`, { method: 'DELETE' });
    const callWindows = Object.fromEntries(
      stack.providers.map((config) => [
        config.name,
        { lateResultMs: lateResultTimeoutMs(config), graceMs: notFoundGraceMs(config) },
      ]),
    );
    // Providers that settle a lost answer by replaying its request: the service's to settle.
    // (The short-window one's only charge is the opening's, whose window closes on purpose.)
    const replayProviders = stack.providers
      .filter((config) => config.kind === 'http' && config.replay !== undefined)
      .map((config) => config.name)
      .filter((name) => name !== SHORT_WINDOW_REPLAY_PROVIDER);
    const settled = await settleEverything(actors, db, root.fork(20_000), {
      timeoutMs: options.settleTimeoutMs ?? 180_000,
      callWindows,
      replayProviders,
      sweepIntervalMs: stack.sweepIntervalMs,
      log: options.log,
    });
    const checked = await checkInvariants({
      db,
      temporal,
      journal,
      world,
      simulatorUrls: stack.simulatorUrls,
      apiUrl: stack.apiUrl,
      owners: stack.owners,
      paymentProviders: PAYMENT_PROVIDERS,
      replayProviders,
      callWindows,
      retryRules: {
        triesInARow: Object.fromEntries(
          stack.providers.map((config) => {
            const retry = retrySettings(config.retry);
            return [config.name, retry && retry.maxAttempts];
          }),
        ),
        maxAttemptsPerJob: stack.maxAttemptsPerJob,
      },
      leftToOperators: settled.leftToOperators,
      unexpectedExits: stack.unexpectedExits(),
    });
    const money = await checkMoney(
      db,
      stack.providers,
      journal.exchanges.filter(
        (exchange) => exchange.status === 402 && exchange.problem === 'budget-exceeded',
      ).length,
    );
    const violations = [...checked.violations, ...money.violations];
    const statuses: Record<string, number> = {};
    for (const exchange of journal.exchanges) {
      const key =
        exchange.status !== 0
          ? String(exchange.status)
          : isClientTimeout(exchange.error)
            ? 'client timeout (30 s)'
            : 'no answer';
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
    const report: CampaignReport = {
      seed: options.seed,
      engine: options.engine ?? 'dev',
      ...(options.engine === 'cluster'
        ? { temporalPostgres: options.temporalPostgres ?? 'shared' }
        : {}),
      trafficMs,
      settleMs: settled.ms,
      operations: Object.fromEntries(journal.operations),
      requests: journal.exchanges.length,
      statuses,
      providerFaults: Object.fromEntries(journal.providerFaults),
      processFaults: journal.processFaults,
      jobsByState: checked.jobsByState,
      raceEvents: checked.raceEvents,
      keyReleases: world.records().reduce((n, record) => n + record.releases.length, 0),
      operatorSettlements: settled.operatorSettlements,
      operatorSettlementsInTraffic: [...world.operatorSettled.values()].filter(
        (phase) => phase === 'traffic',
      ).length,
      replayLooks: checked.replayLooks,
      money: money.looks,
      pauses: { serverPauses: actors.pausesWorkflows ?? false, ...world.pauses },
      workflowsChecked: checked.workflowsChecked,
      // The journal lines of the first violations (a broken build can make thousands).
      violations: violations.map((violation, index) => ({
        ...violation,
        journal: index < 50 ? journal.linesAbout(violation.needles) : [],
      })),
      journalFile: journal.file,
    };
    journal.write({ event: 'report', ...report, violations: report.violations.length });
    return report;
  } finally {
    await parents.stop();
    await db.end().catch(() => undefined);
    await connection.close().catch(() => undefined);
    await stack.stop();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The campaign's parent workflow, bundled for its worker. */
async function bundleParentWorkflow(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({
    workflowsPath: require.resolve('./parentWorkflow'),
    logger: new DefaultLogger('WARN'),
  });
}

/**
 * A worker for the campaign's parent workflow, as a service that starts jobs as children runs
 * one on its own task queue.
 */
async function startParentWorker(
  stack: ChaosStack,
  workflowBundle: WorkflowBundle,
): Promise<{
  start: (record: KeyRecord) => Promise<{ workflowId: string }>;
  stop(): Promise<void>;
}> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  const taskQueue = `${stack.taskQueue}-parents`;
  const worker = await Worker.create({
    connection,
    namespace: stack.namespace,
    taskQueue,
    workflowBundle,
  });
  const running = worker.run();
  const client = new Client({
    connection: await Connection.connect({ address: stack.temporalAddress }),
    namespace: stack.namespace,
  });
  let parents = 0;
  return {
    async start(record) {
      parents += 1;
      const order: ChildJobOrder = {
        owner: record.owner,
        key: record.key,
        jobTaskQueue: stack.taskQueue,
        intent: { ...record.intent, mode: record.intent.mode ?? 'exclusive' },
      };
      const result = await client.workflow.execute('startJobAsChild', {
        taskQueue,
        workflowId: `${stack.taskQueue}-parent-${parents}-${Date.now()}`,
        args: [order],
        workflowExecutionTimeout: '2 minutes',
      });
      return result as { workflowId: string };
    },
    async stop() {
      worker.shutdown();
      await running.catch(() => undefined);
      await client.connection.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}
