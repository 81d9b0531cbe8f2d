import type pg from 'pg';
import { isOpenRunStatus } from '../../src/domain/runStatus';
import { believableAt, workflowStatus, type CallWindow, type LeftToOperator } from './invariants';
import { settleUnknown, type Actors } from './operations';
import type { Random } from './random';

/**
 * After an attempt's call can no longer answer and the grace has passed (believableAt), how long
 * the service may take to settle it itself, beyond its sweeper's interval (an ended job's
 * attempts are the sweeper's): the reconciler's next look is due at once, but after a restart at
 * the end of traffic its workflow task and database steps may wait for a retry (at most 10 s
 * apart). Only an attempt the service left to an operator ever waits this long.
 */
export const RECONCILER_SLACK_MS = 15_000;

/**
 * How often an operator resolves an attempt the service keeps failing to settle (a 5xx, no
 * answer) before leaving it `unknown`: invariant 8 reports the failures, invariant 6 the attempt,
 * and quiescence does not wait for it.
 */
export const OPERATOR_TRIES = 5;

/**
 * When operators may act on an unknown attempt without taking the service's work away from it:
 * the service's time after the attempt became believable, counted from the settle step's start
 * at the earliest (the process faults end with the traffic; the parts they hit may still be
 * catching up).
 */
export function operatorsMayActAt(
  believable: number,
  settleStarted: number,
  serviceTimeMs: number,
): number {
  return Math.max(believable, settleStarted) + serviceTimeMs;
}

interface UnknownRow {
  id: string;
  job_id: string;
  provider: string;
  started_at: Date | null;
  call_ended_at: Date | null;
  /** PostgreSQL's clock, like the call's times. */
  now: Date;
}

interface SettleOptions {
  timeoutMs: number;
  callWindows: Record<string, CallWindow>;
  /**
   * Payment providers that look a lost answer up by replaying its request (issue 59): what the
   * ledger shows is left to the service until it had its time, as a chat attempt is.
   */
  replayProviders?: string[];
  /** How often the service's sweeper runs. */
  sweepIntervalMs: number;
  log: (line: string) => void;
}

/** The operators of the settle step: what they did, and what they found left to them. */
class Operators {
  settlements = 0;
  /** Side-effect-free attempts still unknown after the service's time, by id. */
  readonly leftToThem = new Map<string, LeftToOperator>();
  /** Resolves the service failed (5xx, no answer), by attempt. */
  private readonly failedResolves = new Map<string, number>();
  private readonly serviceTimeMs: number;
  /** The settle step's start, on PostgreSQL's clock. */
  private started: number | undefined;

  constructor(
    private readonly actors: Actors,
    private readonly random: Random,
    private readonly options: SettleOptions,
  ) {
    this.serviceTimeMs = options.sweepIntervalMs + RECONCILER_SLACK_MS;
  }

  /** Given up on: the service failed every resolve of it. */
  gaveUp(attemptId: string): boolean {
    return (this.failedResolves.get(attemptId) ?? 0) >= OPERATOR_TRIES;
  }

  /** One look at every attempt still unknown, `now` on PostgreSQL's clock. */
  async round(unknown: UnknownRow[], now: number): Promise<void> {
    this.started ??= now;
    for (const attempt of unknown) if (!this.gaveUp(attempt.id)) await this.visit(attempt, now);
  }

  private async visit(attempt: UnknownRow, now: number): Promise<void> {
    const window = this.options.callWindows[attempt.provider];
    const believable = window ? believableAt(attempt, window) : Infinity;
    const started = this.started ?? now;
    const serviceHadItsChance = now >= operatorsMayActAt(believable, started, this.serviceTimeMs);
    const sideEffectFree = !this.actors.paymentProviders.includes(attempt.provider);
    const replayed = this.options.replayProviders?.includes(attempt.provider) === true;
    // The service settles these itself once their call is over (a replay provider's lost
    // answer, by its replay): nothing for an operator yet. Invariant 11 judges what is left.
    if ((sideEffectFree || replayed) && !serviceHadItsChance) return;
    if (sideEffectFree && !this.leftToThem.has(attempt.id))
      this.leftToThem.set(attempt.id, {
        id: attempt.id,
        jobId: attempt.job_id,
        provider: attempt.provider,
        pastBelievableMs: now - Math.max(believable, started),
      });
    const status = await settleUnknown(
      this.actors,
      -1,
      'settle',
      attempt,
      this.random,
      serviceHadItsChance,
    );
    if (status === undefined) return;
    if (status >= 200 && status < 300) this.settlements += 1;
    if (status === 0 || status >= 500)
      this.failedResolves.set(attempt.id, (this.failedResolves.get(attempt.id) ?? 0) + 1);
  }
}

/**
 * Quiescence, as people would reach it: the campaign waits until every job is terminal (or
 * still waits on an operator because its provider cannot say yet) and every workflow agrees with
 * its row. Operators settle an attempt left `unknown` from the provider's ledger: a charge the
 * ledger shows at once; anything else only once the service had its chance (see
 * operatorsMayActAt). A side-effect-free attempt still `unknown` then is one the service left to
 * an operator: it is returned, for invariant 6, and settled so that the rest can be checked.
 */
export async function settleEverything(
  actors: Actors,
  db: pg.Pool,
  random: Random,
  options: SettleOptions,
): Promise<{ operatorSettlements: number; ms: number; leftToOperators: LeftToOperator[] }> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const operators = new Operators(actors, random, options);
  let lastReport = 0;
  for (;;) {
    const unknown = (
      await db.query<UnknownRow>(
        `SELECT id, job_id, provider, started_at, call_ended_at, now() AS now
           FROM attempts WHERE state = 'unknown' ORDER BY id`,
      )
    ).rows;
    await operators.round(unknown, unknown[0]?.now.getTime() ?? (await databaseNow(db)));
    const waiting = unknown.filter((attempt) => !operators.gaveUp(attempt.id));
    const open = Number(
      (
        await db.query<{ n: string }>(
          'SELECT count(*) AS n FROM jobs WHERE terminal_status IS NULL',
        )
      ).rows[0]!.n,
    );
    const disagreeing = open === 0 ? await workflowsStillRunning(actors, db) : [];
    if (open === 0 && waiting.length === 0 && disagreeing.length === 0) break;
    if (Date.now() > deadline) {
      options.log(
        `settling: gave up after ${options.timeoutMs} ms with ${open} open jobs and ${disagreeing.length} terminal jobs whose workflow runs`,
      );
      break;
    }
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      options.log(
        `settling: ${open} open jobs, ${unknown.length} unknown attempts (operators settled ${operators.settlements})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return {
    operatorSettlements: operators.settlements,
    ms: Date.now() - started,
    leftToOperators: [...operators.leftToThem.values()],
  };
}

async function databaseNow(db: pg.Pool): Promise<number> {
  return (await db.query<{ now: Date }>('SELECT now() AS now')).rows[0]!.now.getTime();
}

/** Terminal jobs whose workflow has not closed yet. */
async function workflowsStillRunning(actors: Actors, db: pg.Pool): Promise<string[]> {
  const rows = (
    await db.query<{ id: string; workflow_id: string }>(
      'SELECT id, workflow_id FROM jobs WHERE terminal_status IS NOT NULL',
    )
  ).rows;
  const running: string[] = [];
  for (const row of rows) {
    if (isOpenRunStatus(await workflowStatus(actors.temporal, row.workflow_id)))
      running.push(row.id);
  }
  return running;
}
