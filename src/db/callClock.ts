/**
 * A provider call's clock on PostgreSQL's time: when the call is over, and when a provider's
 * "no record" of its attempt may be believed (noted once, confirmed the grace after).
 */
import { type Queryable } from './pool';
import { preparedStatement } from './statements';

/**
 * When a call can no longer land, and when a "no record" about it becomes believable, on
 * PostgreSQL's clock: the call's recorded end, or its start plus the provider's late-result
 * window ($2 ms); then the provider's grace ($3 ms). Both as milliseconds from now (0 once
 * passed), so no worker's clock enters the comparison.
 */
const CALL_CLOCK = `
  coalesce(call_ended_at, started_at + $2::float8 * interval '1 millisecond') AS call_over_at,
  coalesce(call_ended_at, started_at + $2::float8 * interval '1 millisecond')
    + $3::float8 * interval '1 millisecond' AS believable_at`;

const msUntil = (column: string) =>
  `greatest(0, ceil(extract(epoch FROM ${column} - now()) * 1000))::float8`;

const CALL_TIMING = preparedStatement(
  'attempts.call-timing',
  `SELECT ${msUntil('t.call_over_at')} AS ms_until_call_over,
          ${msUntil('t.believable_at')} AS ms_until_believable
     FROM (SELECT ${CALL_CLOCK} FROM attempts WHERE id = $1 AND started_at IS NOT NULL) t`,
);

export interface CallTiming {
  /** 0 once the call can no longer land (it ended, or its late-result window is over). */
  msUntilCallOver: number;
  /** 0 once, on top of that, the provider's grace has passed. */
  msUntilBelievable: number;
}

/** How long until an attempt's call is over, and a "no record" about it believable (see CALL_CLOCK). */
export async function callTiming(
  db: Queryable,
  id: string,
  window: { lateResultMs: number; graceMs: number },
): Promise<CallTiming | undefined> {
  const { rows } = await db.query<{ ms_until_call_over: number; ms_until_believable: number }>(
    CALL_TIMING([id, window.lateResultMs, window.graceMs]),
  );
  const row = rows[0];
  return (
    row && { msUntilCallOver: row.ms_until_call_over, msUntilBelievable: row.ms_until_believable }
  );
}

// One statement, one clock: the row is locked, its first "no record" noted only once believable,
// and "said twice, the grace apart" decided from the noted time and now(), both PostgreSQL's.
const NOTE_NO_RECORD = preparedStatement(
  'attempts.note-no-record',
  `WITH current AS (
     SELECT id, first_not_found_at AS first, ${CALL_CLOCK}
       FROM attempts WHERE id = $1 AND state = 'unknown' AND started_at IS NOT NULL
        FOR UPDATE
   ), noted AS (
     UPDATE attempts a SET first_not_found_at = coalesce(a.first_not_found_at, now()),
                           updated_at = now()
       FROM current c WHERE a.id = c.id AND now() >= c.believable_at
     RETURNING a.id
   )
   SELECT (c.first IS NOT NULL AND now() >= c.believable_at AND c.first < now()
           AND now() >= c.first + $3::float8 * interval '1 millisecond') AS confirmed,
          now() >= c.believable_at AS believable,
          ${msUntil('c.believable_at')} AS ms_until_believable,
          ${msUntil(`coalesce(c.first, now()) + $3::float8 * interval '1 millisecond'`)} AS ms_until_confirmable,
          (SELECT count(*) FROM noted)::int AS noted
     FROM current c`,
);

export type NoRecordVerdict =
  /** Said twice, the grace apart, both after the call was over: it may be believed. */
  | { verdict: 'confirmed' }
  /** Noted (or noted before): believed once a look this much later says it too. */
  | { verdict: 'noted'; recheckInMs: number }
  /** The call may still land: not noted; believable in this much time. */
  | { verdict: 'too-early'; recheckInMs: number };

/**
 * A status lookup found no record of an unknown attempt under our key (undefined: the attempt
 * is no longer unknown). Decided by one
 * statement on PostgreSQL's clock (never a worker's, whose clocks may disagree with it and with
 * each other): too early while the call may still land (its end or window, plus the grace);
 * otherwise the first such answer is noted, and one the grace after it confirms it.
 */
export async function noteNoRecord(
  db: Queryable,
  id: string,
  window: { lateResultMs: number; graceMs: number },
): Promise<NoRecordVerdict | undefined> {
  const { rows } = await db.query<{
    confirmed: boolean;
    believable: boolean;
    ms_until_believable: number;
    ms_until_confirmable: number;
  }>(NOTE_NO_RECORD([id, window.lateResultMs, window.graceMs]));
  const row = rows[0];
  // No longer unknown (settled meanwhile), or its call never began.
  if (!row) return undefined;
  if (row.confirmed) return { verdict: 'confirmed' };
  if (!row.believable) return { verdict: 'too-early', recheckInMs: row.ms_until_believable };
  return { verdict: 'noted', recheckInMs: Math.max(row.ms_until_confirmable, 100) };
}

const FORGET_NO_RECORD = preparedStatement(
  'attempts.forget-no-record',
  `UPDATE attempts SET first_not_found_at = NULL
    WHERE id = $1 AND state = 'unknown' AND first_not_found_at IS NOT NULL`,
);

/** A later lookup knew of the attempt after all (still processing): an earlier "no record" is void. */
export async function forgetNoRecord(db: Queryable, id: string): Promise<void> {
  await db.query(FORGET_NO_RECORD([id]));
}

const PROVIDER_RECORDS_UNTRUSTED = preparedStatement(
  'providers.records-untrusted',
  'SELECT EXISTS (SELECT 1 FROM provider_record_breaches WHERE provider = $1) AS untrusted',
);

/**
 * Whether a provider has answered a 2xx in breach of its contract (migration 0017): then its
 * "no record under our key" proves nothing.
 */
export async function providerRecordsUntrusted(db: Queryable, provider: string): Promise<boolean> {
  const { rows } = await db.query<{ untrusted: boolean }>(PROVIDER_RECORDS_UNTRUSTED([provider]));
  return rows[0]?.untrusted ?? false;
}
