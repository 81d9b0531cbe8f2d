import type pg from 'pg';
import { workflowStatus } from './invariants';
import { settleUnknown, type Actors } from './operations';
import type { Random } from './random';

/**
 * Quiescence, as people would reach it: operators settle every attempt left `unknown` from the
 * provider's ledger, and the campaign waits until every job is terminal (or still waits on an
 * operator because its provider cannot say yet) and every workflow agrees with its row.
 */
export async function settleEverything(
  actors: Actors,
  db: pg.Pool,
  random: Random,
  options: { timeoutMs: number; log: (line: string) => void },
): Promise<{ operatorSettlements: number; ms: number }> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  let operatorSettlements = 0;
  let lastReport = 0;
  for (;;) {
    const unknown = (
      await db.query<{ id: string; provider: string; ended_ago_ms: number | null }>(
        `SELECT id, provider,
                (extract(epoch FROM now() - coalesce(call_ended_at, started_at)) * 1000)::float8 AS ended_ago_ms
           FROM attempts WHERE state = 'unknown' ORDER BY id`,
      )
    ).rows;
    for (const attempt of unknown) {
      if (
        await settleUnknown(
          actors,
          -1,
          'settle',
          attempt,
          random,
          attempt.ended_ago_ms ?? undefined,
        )
      )
        operatorSettlements += 1;
    }
    const open = Number(
      (
        await db.query<{ n: string }>(
          'SELECT count(*) AS n FROM jobs WHERE terminal_status IS NULL',
        )
      ).rows[0]!.n,
    );
    const disagreeing = open === 0 ? await workflowsStillRunning(actors, db) : [];
    if (open === 0 && unknown.length === 0 && disagreeing.length === 0) break;
    if (Date.now() > deadline) {
      options.log(
        `settling: gave up after ${options.timeoutMs} ms with ${open} open jobs and ${disagreeing.length} terminal jobs whose workflow runs`,
      );
      break;
    }
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      options.log(
        `settling: ${open} open jobs, ${unknown.length} unknown attempts settled by operators`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return { operatorSettlements, ms: Date.now() - started };
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
    if ((await workflowStatus(actors.temporal, row.workflow_id)) === 'RUNNING')
      running.push(row.id);
  }
  return running;
}
