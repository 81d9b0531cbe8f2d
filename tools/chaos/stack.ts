import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  certificationPlan,
  certifyMany,
  certificationFailure,
} from '../../src/certification/certify';
import { sweeperConfig, workerConfig } from '../../src/config';
import { migrate } from '../../src/db/migrate';
import { createPool } from '../../src/db/pool';
import type { ProviderConfig } from '../../src/providers/provider';
import { ProviderRegistry, simulatorProviders } from '../../src/providers/registry';
import { BUILT_PRODUCT, builtTool } from '../stack/build';
import { NGINX, obtainDebianProgram } from '../stack/debianPackages';
import { startNginx, type LoadBalancer } from '../stack/nginx';
import { ensureDatabase, probePostgres, startEmbeddedPostgres } from '../stack/postgres';
import {
  childPids,
  freePort,
  isRunning,
  sleep,
  spawnNodeScript,
  startupProgress,
  waitForHttp,
  waitForReady,
  type GuardedProcess,
} from '../stack/processes';
import { obtainTemporalCli } from '../stack/temporalCli';
import { namespaceReady, startTemporalCluster } from '../stack/temporalCluster';
import { obtainTemporalClusterBinaries } from '../stack/temporalClusterBinaries';
import { pickClusterPorts } from '../stack/temporalClusterConfig';
import type { TemporalEngineKind } from '../stack/temporalEngine';
import { startTemporalDevServer, waitForTemporal, type DevServer } from '../stack/temporalServer';
import { BROKE_OWNER, PAYMENT_CALL_WORST_CASE } from './budgets';
import { startLinkProxy, type LinkProxy } from './linkProxy';

/**
 * The real stack a chaos campaign attacks: PostgreSQL, Temporal (the dev server, or the Temporal
 * server on PostgreSQL), two workers and two API replicas behind nginx, and two provider
 * simulators, each its own process as under `npm start`, with a breakable proxy on every link
 * between them, and the process faults the campaign injects (SIGKILL a worker or an API replica,
 * crash and restart Temporal or PostgreSQL, partition a link). Everything lands in one folder:
 * the state files, PostgreSQL's data, nginx's files and every service's log.
 */

export interface ChaosStackOptions {
  /** Folder for this campaign's state and logs: temporal.sqlite, postgres data, nginx, service logs. Created if missing. */
  dir: string;
  /** The folder holding the compiled service to run (a folder like dist/src, with bin/api.js and bin/worker.js); default: this checkout's. A throwaway build with a planted bug passes its own. */
  buildDir?: string;
  log: (line: string) => void;
  /** Extra environment for the API and worker processes (e.g. ONEJOB_HEDGE_DELAY_MS). */
  serviceEnv?: NodeJS.ProcessEnv;
  /** Use a running Temporal (no Temporal restarts then) / PostgreSQL server (admin URL; a database of its own is created on it; no PostgreSQL restarts then). */
  temporalAddress?: string;
  databaseUrl?: string;
  /**
   * The Temporal engine to run when no address is given: the dev server (its state in a file
   * here), or the Temporal server on PostgreSQL, our production engine, whose state lives in the
   * campaign's PostgreSQL server beside ours, so one PostgreSQL crash takes both. Default dev.
   */
  engine?: TemporalEngineKind;
  /**
   * With the production engine: Temporal's state on our PostgreSQL server (`shared`, the
   * default: one crash takes both), or on a server of its own that crashes apart (`apart`).
   */
  temporalPostgres?: 'shared' | 'apart';
  /** Every provider's attempt timeout: a hung call becomes `unknown` this soon. Default 3000 ms. */
  providerTimeoutMs?: number;
}

/** Certifies every provider, as `npm start` does, again after a failure (see CERTIFICATION_TRIES). */
async function certifyProviders(
  databaseUrl: string,
  providers: ProviderConfig[],
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  const db = createPool(databaseUrl, { max: 1 });
  const registry = new ProviderRegistry(
    providers.map((provider) => ({ ...provider, timeoutMs: CERTIFICATION_TIMEOUT_MS })),
    env,
  );
  try {
    for (let tries = 1; ; tries++) {
      const reports = await certifyMany({ db, providers: certificationPlan(registry) });
      const failed = reports.filter((report) => !report.passed);
      if (failed.length === 0)
        return log(`certified ${reports.map((r) => `${r.provider}/${r.jobType}`).join(', ')}`);
      const why = failed
        .map((r) => `${r.provider}/${r.jobType} (${certificationFailure(r)})`)
        .join(', ');
      if (tries >= CERTIFICATION_TRIES) throw new Error(`certification failed: ${why}`);
      log(`certification failed: ${why}; certifying again`);
    }
  } finally {
    await db.end();
  }
}

/** A PostgreSQL server of the campaign's own, started embedded, which it may crash. */
interface OwnPostgres {
  requestedDir: string;
  dataDir: string;
  port: number;
  url: string;
  process: GuardedProcess;
}

/** A service that died without being told to (not one of our kills): a finding in itself. */
export interface ServiceExit {
  service: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  at: string;
}

export interface ChaosStack {
  /** nginx in front of both API replicas (round-robin, the repo's template). */
  apiUrl: string;
  /** Each replica directly. */
  apiReplicaUrls: string[];
  /** The campaign's own database (a fresh one each campaign). */
  databaseUrl: string;
  temporalAddress: string;
  namespace: string;
  /** A fresh one per campaign. */
  taskQueue: string;
  /** Simulators: [0] serves chat (providers `simulator`, `simulator-backup`) and payments (`simulator-pay`); [1] a second payment provider `simulator-pay-2` with its own ledger; [2] a third payment API, behind `simulator-pay-replay` and `simulator-pay-search` (PAYMENT_PROVIDER_SIMULATORS). */
  simulatorUrls: string[];
  /** Owners and their API tokens (at least 3 owners, and the opening's broke owner), the operator's token, and each payment provider's callback secret (its own: a shared one is refused at start). */
  owners: Record<string, string>;
  operatorToken: string;
  /** Provider name → its callback secret. */
  callbackSecrets: Record<string, string>;
  /** The provider configs the services run with (ONEJOB_PROVIDERS). */
  providers: ProviderConfig[];
  /** How often each worker's sweeper runs (ONEJOB_SWEEP_INTERVAL_MS). */
  sweepIntervalMs: number;
  /** The most attempts a job may have (ONEJOB_MAX_ATTEMPTS_PER_JOB). */
  maxAttemptsPerJob: number;
  /** Which process faults this stack can take (external Temporal/PostgreSQL cannot be restarted). */
  can: {
    killWorker: boolean;
    killApi: boolean;
    restartTemporal: boolean;
    restartPostgres: boolean;
    restartTemporalPostgres: boolean;
  };
  /** SIGKILL worker `index` (0 or 1), wait for its exit, start a fresh one; resolves when the new one reports ready. */
  killWorker(index: number): Promise<void>;
  /** SIGKILL API replica `index`, wait, restart it on the SAME port; resolves when /healthz answers. */
  killApi(index: number): Promise<void>;
  /** SIGKILL the `temporal` process itself and start it again on the same ports with the same state; resolves when it answers. */
  restartTemporal(): Promise<void>;
  /** SIGKILL every PostgreSQL process at once (a crash) and start it again on the SAME port with the same data; resolves when it accepts connections. */
  restartPostgres(): Promise<void>;
  /** The same crash of Temporal's own PostgreSQL server, when its state lives apart from ours. */
  restartTemporalPostgres(): Promise<void>;
  /**
   * The links between our processes, each through a proxy the campaign can break: `api-0→postgres`,
   * `worker-1→temporal`, `worker-0→simulator-1`, `nginx→api-1`, …
   */
  links: ReadonlyMap<string, LinkProxy>;
  /**
   * What a service (`api-0`, `worker-1`) answers on `/readyz` now, or nginx on `/healthz` (which
   * it passes to a replica); undefined if it does not answer within 5 s (each of its checks waits up to 2 s).
   */
  readiness(service: string): Promise<{ status: number; body: string } | undefined>;
  /** Lines every service process wrote (APIs, workers, simulators; the latest 1 MB). */
  serviceOutput(): string;
  /** Processes that exited on their own after they were up (services, simulators, Temporal, the PostgreSQL wrapper, nginx). */
  unexpectedExits(): ServiceExit[];
  stop(): Promise<void>;
}

/** The simulators are stand-ins, not the service under test: always this checkout's build. */
const SIMULATOR_SCRIPT = builtTool('simulator', 'main.js');
const OUTPUT_KEPT = 1_000_000;
/** How long a restarted service may take to come up (its dependencies may be down a while). */
const SERVICE_START_TIMEOUT_MS = 180_000;
/**
 * Every provider's late-result window: longer than the slowest answer the campaign draws (a
 * slow primary's 11 s, see operations.ts), so late answers still land and race, yet half the
 * default (10 × the 3 s timeout), so that calls cut off, and what waits for them, end sooner.
 */
const LATE_RESULT_MS = 15_000;
/** Every provider's grace before "no record" is believed: the simulator registers at once. */
const NOT_FOUND_GRACE_MS = 3_000;
/**
 * Certification is set-up, not under test, and a busy machine slows it: a call may take longer
 * than the campaign's timeout (a verdict does not depend on it), and a kept-alive connection may
 * be reused just as the simulator closes it (its client's timer fired late). So its calls wait
 * longer, and a failed certification is run again, a few times.
 */
const CERTIFICATION_TIMEOUT_MS = 30_000;
const CERTIFICATION_TRIES = 3;
/**
 * How long an open breaker keeps every new attempt from its provider before a probe: 5 s instead
 * of 30. The campaign's storms and outages last 2–8 s, and a job with nothing else left waits
 * for the provider on a durable timer; with the default, jobs caught at the end of traffic would
 * keep the settling waiting half a minute for a provider that was well again long before.
 */
const BREAKER_COOL_OFF_MS = 5_000;
/**
 * How often each worker's sweeper reconciles the unknown attempts of ended jobs (and heals open
 * jobs nobody runs): 5 s instead of a minute, so that quiescence comes sooner.
 */
const SWEEP_INTERVAL_MS = 5_000;

/**
 * The payment providers and the simulator that serves each: `simulator-pay` on [0] and
 * `simulator-pay-2` on [1], each with a status lookup by key; on [2], `simulator-pay-replay` (no
 * lookup but the replay of its first request, issue 59) and `simulator-pay-search` (a search
 * that lags its writes). Faults meant for one call are queued at [2] only for a job's account,
 * so none meets a replay: a fault taken by a replay (a hang, a 400, a 5xx after the work) would
 * be the simulator's doing, not what a provider's stored answer to a replay is.
 */
export const PAYMENT_PROVIDER_SIMULATORS: Readonly<Record<string, number>> = {
  'simulator-pay': 0,
  'simulator-pay-2': 1,
  'simulator-pay-replay': 2,
  'simulator-pay-search': 2,
  'simulator-pay-replay-short': 2,
};

/**
 * The replay provider's key window: 2 minutes, replays until 20 s short of it. Shorter than the
 * simulator's own retention (24 h), as a config must be; long enough that every lost answer the
 * campaign makes (a processing delay of at most 9 s, a partition of at most 25 s) is settled
 * inside it, short enough that an attempt left unknown (a hung request, a stored 5xx) sees its
 * window close within a run.
 */
export const REPLAY_WINDOW = { keyWindow: 120_000, margin: 20_000 } as const;

/**
 * The short-window replay provider's: replays for 4 s after the first send (its call times out
 * at 3 s). Still shorter than the simulator's retention, so a re-send after it is one request too
 * many (invariant 4), not a second charge.
 */
export const SHORT_REPLAY_WINDOW = { keyWindow: 6_000, margin: 2_000 } as const;

/** How far the third simulator's search lags its writes; its provider is told a second more. */
export const SEARCH_LAG_MS = 2_000;

/** The third simulator's search lags its writes by SEARCH_LAG_MS; keys stay kept 24 h. */
async function configureSearchLag(simulatorUrl: string): Promise<void> {
  const answer = await fetch(`${simulatorUrl}/_simulator/settings`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ searchLagMs: SEARCH_LAG_MS }),
  });
  if (answer.status !== 200)
    throw new Error(`the simulator at ${simulatorUrl} refused its settings: ${answer.status}`);
  await answer.body?.cancel();
}

const token = (label: string): string => `${label}-${randomBytes(12).toString('hex')}`;

async function until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await sleep(20);
  }
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    // Already gone: that is what we wanted.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Serializes the faults on one part: a kill while its previous restart runs waits for it. */
class Serial {
  private queue: Promise<unknown> = Promise.resolve();
  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
  /** Settles once every fault queued so far has run. */
  idle(): Promise<unknown> {
    return this.queue;
  }
}

/** What the service processes write: each into its own file, and the latest into memory. */
function serviceOutputs(dir: string) {
  let kept = '';
  const keep = (line: string): void => {
    kept += line;
    if (kept.length > OUTPUT_KEPT * 1.5) kept = kept.slice(-OUTPUT_KEPT);
  };
  return {
    attach(name: string, proc: GuardedProcess): void {
      const file = path.join(dir, `${name}.log`);
      const banner = `--- ${name} pid ${proc.child.pid} started ${new Date().toISOString()}\n`;
      appendFileSync(file, banner);
      keep(`[${name}] ${banner}`);
      for (const stream of [proc.child.stdout, proc.child.stderr]) {
        let partial = '';
        stream?.on('data', (chunk: Buffer) => {
          appendFileSync(file, chunk);
          const lines = (partial + chunk.toString()).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) keep(`[${name}] ${line}\n`);
        });
        stream?.on('end', () => partial && keep(`[${name}] ${partial}\n`));
      }
    },
    text: (): string => kept.slice(-OUTPUT_KEPT),
  };
}

/** One API replica, worker or simulator: the process now running in that place. */
interface Slot {
  name: string;
  script: string;
  env: () => Promise<NodeJS.ProcessEnv>;
  ready: (proc: GuardedProcess) => Promise<void>;
  /** Where the running process says whether it can serve (`/readyz`), for a service. */
  readinessUrl?: string;
  process?: GuardedProcess;
  /** Up and not being killed by us: an exit now is unexpected. */
  up: boolean;
  faults: Serial;
}

async function waitForPostgres(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const probe = await probePostgres(url);
    if (probe.kind === 'usable') return;
    if (Date.now() > deadline)
      throw new Error(
        `PostgreSQL did not accept connections within ${timeoutMs} ms (${probe.kind === 'refused' ? probe.reason : 'nothing listening'})`,
      );
    await sleep(100);
  }
}

export async function startChaosStack(options: ChaosStackOptions): Promise<ChaosStack> {
  const { log } = options;
  const dir = path.resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const buildDir = path.resolve(options.buildDir ?? BUILT_PRODUCT);
  for (const name of ['api', 'worker'])
    if (!existsSync(path.join(buildDir, 'bin', `${name}.js`)))
      throw new Error(`${buildDir} has no bin/${name}.js: build it first (npm run build)`);
  if (!existsSync(SIMULATOR_SCRIPT))
    throw new Error(`${SIMULATOR_SCRIPT} is missing: npm run build first`);

  const outputs = serviceOutputs(dir);
  let stopping = false;
  const exits: ServiceExit[] = [];
  const noteExit = (service: string, proc: GuardedProcess, code: number | null): void => {
    const exit = { service, code, signal: proc.child.signalCode, at: new Date().toISOString() };
    exits.push(exit);
    log(`${service} exited unexpectedly (code ${code}, signal ${exit.signal})`);
  };
  /** The server processes we are killing: their exit is no finding. */
  const killedByUs = new Set<GuardedProcess>();
  const watchServer = (service: string, proc: GuardedProcess): void =>
    void proc.exited.then((code) => {
      if (!stopping && !killedByUs.has(proc)) noteExit(service, proc, code);
    });

  // Whatever has started so far, so that a failed start leaves nothing behind. The PostgreSQL
  // servers of the campaign's own: `postgres` (ours), and `temporal-postgres` when Temporal's
  // state lives apart.
  const ownPostgres = new Map<string, OwnPostgres>();
  let temporal: DevServer | undefined;
  let nginx: LoadBalancer | undefined;
  const slots: Slot[] = [];
  const links = new Map<string, LinkProxy>();

  const temporalFaults = new Serial();
  const postgresFaults = new Serial();
  const temporalPostgresFaults = new Serial();
  let stopped: Promise<void> | undefined;
  const stopAll = (): Promise<void> => {
    stopping = true;
    stopped ??= stopEverything();
    return stopped;
  };
  const stopEverything = async (): Promise<void> => {
    // A server restart under way would otherwise bring its server back after we stopped it.
    await Promise.all([
      temporalFaults.idle(),
      postgresFaults.idle(),
      temporalPostgresFaults.idle(),
    ]);
    await nginx?.stop();
    const stopSlots = (prefix: string) =>
      Promise.all(
        slots.filter((s) => s.name.startsWith(prefix)).map(async (s) => s.process?.stop()),
      );
    // Front to back. The simulators before the workers: calls hanging on them end at once,
    // so the workers' graceful shutdown does not wait for them.
    await stopSlots('api');
    await stopSlots('simulator');
    await stopSlots('worker');
    await Promise.all([...links.values()].map((link) => link.close()));
    await temporal?.stop();
    for (const server of ownPostgres.values()) {
      await server.process.stop();
      // Data the postgres user could not keep in the run's folder went to /var/lib/onejob (as
      // root): one folder per run, removed here so that runs do not pile up. The log stays.
      if (server.dataDir !== server.requestedDir)
        rmSync(path.dirname(server.dataDir), { recursive: true, force: true });
    }
  };

  /** Starts one of the campaign's own PostgreSQL servers, its data under `dir/<name>`. */
  const startOwnPostgres = async (name: string, port?: number): Promise<OwnPostgres> => {
    const requestedDir = path.join(dir, name);
    const started = await startEmbeddedPostgres(requestedDir, log, port);
    const server = { requestedDir, ...started };
    ownPostgres.set(name, server);
    watchServer(name, started.process);
    return server;
  };

  /**
   * Crashes one of our PostgreSQL servers (every process SIGKILLed at once) and starts it again
   * on the same port with the same data; resolves when `probeUrl` accepts connections.
   */
  const crashPostgres = async (name: string, probeUrl: string): Promise<void> => {
    const server = ownPostgres.get(name);
    if (!server) throw new Error(`${name} is external: it cannot be restarted`);
    killedByUs.add(server.process);
    const pidFile = path.join(server.dataDir, 'postmaster.pid');
    const postmaster = existsSync(pidFile)
      ? Number(readFileSync(pidFile, 'utf8').split('\n')[0])
      : NaN;
    // (Not running: it has died already, and only the start below is left to do.)
    if (Number.isInteger(postmaster) && postmaster > 0 && isRunning(postmaster)) {
      // Frozen first, so it forks no backend we would miss; then every process at once,
      // as a crash takes them, its children before it so none sees it gone and shuts
      // down politely: no shutdown checkpoint, the next start recovers from the WAL.
      kill(postmaster, 'SIGSTOP');
      const victims = [...childPids(postmaster), postmaster];
      for (const pid of victims) kill(pid, 'SIGKILL');
      await until(
        () => victims.every((pid) => !isRunning(pid)),
        10_000,
        'PostgreSQL processes did not die',
      );
    }
    // The wrapper process outlives its server and would only wait for it: kill it too.
    server.process.child.kill('SIGKILL');
    await server.process.exited;
    // Reaped for good: a start that still saw this pid would take postmaster.pid for a
    // live server's. A stale postmaster.pid of a dead one PostgreSQL handles itself.
    if (Number.isInteger(postmaster) && postmaster > 0)
      await until(
        () => !existsSync(`/proc/${postmaster}`),
        10_000,
        `the old postmaster ${postmaster} was not reaped`,
      );
    ownPostgres.delete(name);
    // Each start rewrites its log; keep what the crashed server wrote.
    const logFile = `${server.dataDir}.log`;
    if (existsSync(logFile))
      appendFileSync(
        path.join(dir, `${name}-earlier-runs.log`),
        `--- killed ${new Date().toISOString()}\n${readFileSync(logFile, 'utf8')}`,
      );
    await startOwnPostgres(name, server.port);
    await waitForPostgres(probeUrl, 30_000);
  };

  /** Starts the slot's process, again until it is ready (its dependencies may be restarting). */
  const startSlot = async (slot: Slot): Promise<void> => {
    const started = Date.now();
    const deadline = started + SERVICE_START_TIMEOUT_MS;
    for (let attempt = 1; ; attempt++) {
      const env = await slot.env();
      // Checked right before the spawn: stop() must not miss a process started behind its back.
      if (stopping) throw new Error(`${slot.name}: the stack is stopping`);
      const proc = spawnNodeScript(slot.script, [], {
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        env,
      });
      slot.process = proc;
      outputs.attach(slot.name, proc);
      void proc.exited.then((code) => {
        if (slot.process !== proc || !slot.up || stopping) return;
        slot.up = false;
        noteExit(slot.name, proc, code);
      });
      try {
        await slot.ready(proc);
        slot.up = true;
        log(`${slot.name} up (pid ${proc.child.pid}) in ${Date.now() - started} ms`);
        return;
      } catch (error) {
        await proc.stop();
        const reason = (error as Error).message;
        if (Date.now() > deadline || stopping)
          throw new Error(`${slot.name} did not start: ${reason}; see ${dir}/${slot.name}.log`);
        log(`${slot.name} did not start (try ${attempt}: ${reason}); trying again`);
        await sleep(500);
      }
    }
  };

  /** SIGKILL, wait for the exit, start afresh. */
  const killSlot = (slot: Slot): Promise<void> =>
    slot.faults.run(async () => {
      const proc = slot.process;
      slot.up = false;
      if (proc) {
        proc.child.kill('SIGKILL');
        await proc.exited;
      }
      await startSlot(slot);
    });

  try {
    // PostgreSQL: the campaign's own embedded server (never the machine's shared one: it is
    // restarted), or the given one, which is then never restarted.
    const databaseName = `onejob_chaos_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    let adminUrl: string;
    if (options.databaseUrl) {
      adminUrl = options.databaseUrl;
    } else {
      adminUrl = (await startOwnPostgres('postgres')).url;
    }
    const databaseUrl = await ensureDatabase(adminUrl, databaseName);
    // Migrated before any service starts (they migrate too, under the same lock), as npm start does.
    const setupPool = createPool(databaseUrl, { max: 1 });
    try {
      await migrate(setupPool);
    } finally {
      await setupPool.end();
    }

    // Temporal: the dev server with its state in our folder, or the server on PostgreSQL with
    // its state beside ours, on ports fixed for the campaign so that a restart comes back where
    // the services look for it.
    let temporalAddress: string;
    let startTemporal: (() => Promise<DevServer>) | undefined;
    // A server of its own serves the default namespace; on a shared one, the campaign's jobs get
    // a namespace of their own: every campaign of one seed makes the same owners and keys, hence
    // the same workflow ids.
    let namespace = 'default';
    if (options.temporalAddress) {
      temporalAddress = options.temporalAddress;
      namespace = databaseName.replace(/_/g, '-');
      await waitForTemporal(temporalAddress, {
        timeoutMs: 60_000,
        probe: namespaceReady(namespace),
      });
    } else if (options.engine === 'cluster') {
      const binaries = await obtainTemporalClusterBinaries(log, { withUi: false });
      const ports = await pickClusterPorts();
      const temporalAdminUrl =
        options.temporalPostgres === 'apart'
          ? (await startOwnPostgres('temporal-postgres')).url
          : adminUrl;
      startTemporal = async () => {
        const server = await startTemporalCluster({
          binaries,
          adminDatabaseUrl: temporalAdminUrl,
          databaseName: `${databaseName}_temporal`,
          dir: path.join(dir, 'temporal-cluster'),
          ports,
          log,
        });
        watchServer('temporal', server.process);
        return server;
      };
      temporal = await startTemporal();
      temporalAddress = temporal.address;
    } else {
      const cli = await obtainTemporalCli(log);
      const ports = { port: await freePort(), httpPort: await freePort() };
      const metricsPort = await freePort();
      startTemporal = async () => {
        const server = await startTemporalDevServer({
          cliPath: cli.path,
          ...ports,
          metricsPort,
          dbFilename: path.join(dir, 'temporal.sqlite'),
          logFile: path.join(dir, 'temporal.log'),
        });
        watchServer('temporal', server.process);
        return server;
      };
      temporal = await startTemporal();
      temporalAddress = temporal.address;
    }

    const simulatorPorts = [await freePort(), await freePort(), await freePort()];
    const simulatorUrls = simulatorPorts.map((port) => `http://127.0.0.1:${port}`);
    const timeoutMs = options.providerTimeoutMs ?? 3_000;
    // The standard simulator providers on [0], a second payment API on [1] with a callback
    // secret of its own, all with the short timeout and windows.
    const providersAt = ([sim0, sim1, sim2]: string[]): ProviderConfig[] =>
      [
        ...simulatorProviders(sim0!),
        {
          name: 'simulator-pay-2',
          kind: 'http' as const,
          url: `${sim1}/v1/charges`,
          statusUrl: `${sim1}/v1/charges/by-key/{key}`,
          timeoutMs,
          sideEffects: true,
          callbackSecretEnv: 'ONEJOB_CHAOS_PAY_2_CALLBACK_SECRET',
        },
        // As a Stripe-like API is configured (issue 59): no status lookup by key, so a lost
        // answer is settled by replaying the first request under its key inside the window.
        {
          name: 'simulator-pay-replay',
          kind: 'http' as const,
          url: `${sim2}/v1/charges`,
          timeoutMs,
          sideEffects: true,
          replay: REPLAY_WINDOW,
        },
        // The same, with a key window that closes within seconds: the opening's charge on it is
        // still being processed when its window closes.
        {
          name: 'simulator-pay-replay-short',
          kind: 'http' as const,
          url: `${sim2}/v1/charges`,
          timeoutMs,
          sideEffects: true,
          replay: SHORT_REPLAY_WINDOW,
        },
        // A search by key whose index lags its writes, configured with that lag.
        {
          name: 'simulator-pay-search',
          kind: 'http' as const,
          url: `${sim2}/v1/charges`,
          searchUrl: `${sim2}/v1/charges/search?query=idempotency_key:'{key}'`,
          consistency: { lagMs: SEARCH_LAG_MS + 1_000 },
          timeoutMs,
          sideEffects: true,
        },
      ].map((provider) => ({
        ...provider,
        // Payment APIs bill a fee per call: its most is the worst case a budget reserves.
        ...(provider.kind === 'http' ? { maxCostPerCall: PAYMENT_CALL_WORST_CASE } : {}),
        timeoutMs,
        lateResultTimeoutMs: Math.max(LATE_RESULT_MS, 4 * timeoutMs),
        notFoundGraceMs: NOT_FOUND_GRACE_MS,
        breaker: { coolOffMs: BREAKER_COOL_OFF_MS },
      }));
    const providers = providersAt(simulatorUrls);

    // Every link between our processes runs through a proxy of its own that the campaign can
    // break and heal (partitions): each service to PostgreSQL and to Temporal, each worker to
    // each provider, nginx to each replica. The campaign's own observers connect directly.
    const linked = async (name: string, host: string, port: number): Promise<number> => {
      const proxy = await startLinkProxy({ host, port });
      links.set(name, proxy);
      return proxy.port;
    };
    const postgresAt = new URL(databaseUrl);
    const [temporalHost, temporalPort] = temporalAddress.split(':') as [string, string];
    /** DATABASE_URL and TEMPORAL_ADDRESS of one service, each through its own link. */
    const linkedDependencies = async (service: string): Promise<NodeJS.ProcessEnv> => {
      const database = new URL(databaseUrl);
      database.port = String(
        await linked(`${service}→postgres`, postgresAt.hostname, Number(postgresAt.port)),
      );
      const temporalLink = await linked(`${service}→temporal`, temporalHost, Number(temporalPort));
      return { DATABASE_URL: database.toString(), TEMPORAL_ADDRESS: `127.0.0.1:${temporalLink}` };
    };

    const owners: Record<string, string> = Object.fromEntries(
      ['chaos-alice', 'chaos-bob', 'chaos-carol', BROKE_OWNER].map((owner) => [
        owner,
        token(owner),
      ]),
    );
    const operatorToken = token('chaos-operator');
    const callbackSecrets = {
      'simulator-pay': token('chaos-callback'),
      'simulator-pay-2': token('chaos-callback-2'),
    };
    const taskQueue = `onejob-chaos-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
    const serviceEnv: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      ONEJOB_TASK_QUEUE: taskQueue,
      ONEJOB_PROVIDERS: JSON.stringify(providers),
      ONEJOB_API_TOKENS: Object.entries(owners)
        .map(([owner, ownerToken]) => `${owner}:${ownerToken}`)
        .join(','),
      ONEJOB_OPERATOR_TOKENS: `chaos-operator:${operatorToken}`,
      // The key that seals webhook secrets at rest: the run's own, as a deployment's would be.
      ONEJOB_SECRET_KEYS: `chaos:${randomBytes(32).toString('base64')}`,
      // Limits are on in every deployment; these are sized for a campaign's traffic, not a tenant's.
      ONEJOB_OWNER_CREATES_PER_SECOND: '1000',
      ONEJOB_OWNER_CREATE_BURST: '10000',
      ONEJOB_OWNER_MAX_OPEN_JOBS: '100000',
      ONEJOB_OWNER_WEBHOOK_REQUESTS_PER_SECOND: '1000',
      ONEJOB_OWNER_WEBHOOK_REQUEST_BURST: '10000',
      ONEJOB_SIMULATOR_CALLBACK_SECRET: callbackSecrets['simulator-pay'],
      ONEJOB_CHAOS_PAY_2_CALLBACK_SECRET: callbackSecrets['simulator-pay-2'],
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      ONEJOB_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
      // The campaign breaks answers at random on purpose, far above any real provider's rate:
      // continuous certification would take providers out of failover, which invariant 9 does
      // not judge. test/continuousCertification.test.ts proves that rule on its own.
      ONEJOB_DECERTIFY_THRESHOLD: 'off',
      ...options.serviceEnv,
    };

    const simulators = simulatorPorts.map((port, index): Slot => ({
      name: `simulator-${index}`,
      script: SIMULATOR_SCRIPT,
      env: async () => ({
        ...process.env,
        SIMULATOR_HOST: '127.0.0.1',
        SIMULATOR_PORT: String(port),
      }),
      ready: async (proc) => {
        await waitForHttp(`http://127.0.0.1:${port}/healthz`, 30_000, proc.exited);
        // Every start, the certification's restart too: a simulator starts with defaults.
        if (index === 2) await configureSearchLag(`http://127.0.0.1:${port}`);
      },
      up: false,
      faults: new Serial(),
    }));
    slots.push(...simulators);
    await Promise.all(simulators.map(startSlot));

    // Failover needs certified providers, as npm start certifies the simulator's. Certifying
    // sends real requests (charges too), so the simulators start again afterwards: the ledgers
    // the campaign reads hold only what the service did.
    const certified = (async () => {
      await certifyProviders(databaseUrl, providers, serviceEnv, log);
      for (const simulator of simulators) await killSlot(simulator);
    })();

    const apiPorts = [await freePort(), await freePort()];
    const workers: Slot[] = [];
    for (const index of [0, 1]) {
      const name = `worker-${index}`;
      const dependencies = await linkedDependencies(name);
      const simulatorLinks: string[] = [];
      for (const [simulator, port] of simulatorPorts.entries())
        simulatorLinks.push(
          `http://127.0.0.1:${await linked(`${name}→simulator-${simulator}`, '127.0.0.1', port)}`,
        );
      const slot: Slot = {
        name,
        script: path.join(buildDir, 'bin', 'worker.js'),
        // Fresh metrics and health ports each start: nobody scrapes them, and none can be taken
        // meanwhile.
        env: async () => {
          const health = `127.0.0.1:${await freePort()}`;
          slot.readinessUrl = `http://${health}/readyz`;
          return {
            ...serviceEnv,
            ...dependencies,
            ONEJOB_PROVIDERS: JSON.stringify(providersAt(simulatorLinks)),
            ONEJOB_WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
            ONEJOB_WORKER_HEALTH_ADDRESS: health,
          };
        },
        ready: (proc) => waitForReady(proc, 120_000),
        up: false,
        faults: new Serial(),
      };
      workers.push(slot);
    }
    const apis: Slot[] = [];
    for (const [index, port] of apiPorts.entries()) {
      const name = `api-${index}`;
      const dependencies = await linkedDependencies(name);
      apis.push({
        name,
        script: path.join(buildDir, 'bin', 'api.js'),
        env: async () => ({ ...serviceEnv, ...dependencies, PORT: String(port) }),
        ready: (proc) =>
          waitForHttp(
            `http://127.0.0.1:${port}/healthz`,
            60_000,
            proc.exited,
            startupProgress(proc),
          ),
        readinessUrl: `http://127.0.0.1:${port}/readyz`,
        up: false,
        faults: new Serial(),
      });
    }
    slots.push(...workers, ...apis);
    // Workers and API replicas need no provider before traffic: they start while certifying.
    await Promise.all([certified, ...[...workers, ...apis].map(startSlot)]);

    const nginxPath = await obtainDebianProgram(NGINX, log);
    nginx = await startNginx({
      dir: path.join(dir, 'nginx'),
      port: await freePort(),
      upstreams: await Promise.all(
        apiPorts.map(
          async (port, index) =>
            `127.0.0.1:${await linked(`nginx→api-${index}`, '127.0.0.1', port)}`,
        ),
      ),
      balance: 'round-robin',
      nginxPath,
    });
    watchServer('nginx', nginx.process);
    await waitForHttp(`${nginx.url}/healthz`, 10_000, nginx.process.exited);

    const slotAt = (list: Slot[], index: number, what: string): Slot => {
      const slot = list[index];
      if (!slot) throw new Error(`there is no ${what} ${index} (0 or 1)`);
      return slot;
    };
    log(
      `chaos stack up: API ${nginx.url}, Temporal ${temporalAddress}, database ${databaseName}, task queue ${taskQueue}, logs in ${dir}`,
    );

    return {
      apiUrl: nginx.url,
      apiReplicaUrls: apiPorts.map((port) => `http://127.0.0.1:${port}`),
      databaseUrl,
      temporalAddress,
      namespace,
      taskQueue,
      simulatorUrls,
      owners,
      operatorToken,
      callbackSecrets,
      providers,
      sweepIntervalMs: sweeperConfig(serviceEnv).intervalMs,
      maxAttemptsPerJob: workerConfig(serviceEnv).maxAttemptsPerJob,
      can: {
        killWorker: true,
        killApi: true,
        restartTemporal: temporal !== undefined,
        restartPostgres: ownPostgres.has('postgres'),
        restartTemporalPostgres: ownPostgres.has('temporal-postgres'),
      },
      killWorker: (index) => killSlot(slotAt(workers, index, 'worker')),
      killApi: (index) => killSlot(slotAt(apis, index, 'API replica')),

      restartTemporal: () =>
        temporalFaults.run(async () => {
          const server = temporal;
          if (!server || !startTemporal)
            throw new Error('Temporal is external (temporalAddress): it cannot be restarted');
          killedByUs.add(server.process);
          // The guardian only forwards polite signals; the crash is the `temporal` binary's own.
          // (None found: it has died already, and its guardian is exiting too.)
          const guardianPid = server.process.child.pid;
          const binaries = guardianPid === undefined ? [] : childPids(guardianPid);
          for (const pid of binaries) kill(pid, 'SIGKILL');
          // The guardian exits as soon as its child has.
          await server.process.exited;
          temporal = undefined;
          temporal = await startTemporal();
        }),

      restartPostgres: () => postgresFaults.run(() => crashPostgres('postgres', databaseUrl)),
      restartTemporalPostgres: () =>
        temporalPostgresFaults.run(() =>
          crashPostgres('temporal-postgres', ownPostgres.get('temporal-postgres')?.url ?? ''),
        ),

      links,
      readiness: async (service) => {
        const url =
          service === 'nginx'
            ? `${nginx!.url}/healthz`
            : slots.find((slot) => slot.name === service)?.readinessUrl;
        if (!url) throw new Error(`there is no service ${service} with a readiness check`);
        try {
          const answer = await fetch(url, { signal: AbortSignal.timeout(5_000) });
          return { status: answer.status, body: (await answer.text()).slice(0, 300) };
        } catch {
          return undefined;
        }
      },
      serviceOutput: () => outputs.text(),
      unexpectedExits: () => [...exits],
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw new Error(
      `${(error as Error).message}\n--- service output ---\n${outputs.text().slice(-4_000)}`,
    );
  }
}
