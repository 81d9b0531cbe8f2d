/**
 * A replay lookup's rows (migration 0025): the request as a call first sent it, and each replay
 * sent to look at it. PostgreSQL refuses a replay's begin at or after the provider's key window
 * (less its margin), so the only way to send one, beginReplay, cannot turn a look into a charge.
 */
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/** A provider's key retention and the margin kept short of it, in milliseconds. */
export interface KeyWindow {
  keyWindowMs: number;
  marginMs: number;
}

const KEEP_FIRST_SEND = preparedStatement(
  'attempt-sends.keep',
  // replay_until is the trigger's to write (migration 0025); the placeholder is overwritten.
  `INSERT INTO attempt_sends (attempt_id, body, key_window_ms, margin_ms, replay_until)
   VALUES ($1, $2, $3, $4, now())`,
);

/** Keeps the request's bytes, before they leave: its first send is counted from now. */
export async function keepFirstSend(
  db: Queryable,
  attemptId: string,
  body: Uint8Array,
  window: KeyWindow,
): Promise<void> {
  await db.query(
    KEEP_FIRST_SEND([attemptId, Buffer.from(body), window.keyWindowMs, window.marginMs]),
  );
}

/**
 * No replay of the attempt may still land (SQL over an `attempts` row): a failure report waits
 * while one may, since a replay that reaches the provider first does the work.
 */
export const NO_REPLAY_MAY_LAND = `coalesce(replay_lands_by, '-infinity'::timestamptz) <= now()`;

/**
 * No replay's work is in doubt (SQL over an `attempts` row): the last replay answered, it told
 * what the key did. After a lost answer only a later replay that tells, or an operator's word
 * given since (`operatorNow`, SQL), may settle the attempt failed.
 */
export const noReplayInDoubt = (operatorNow = 'false') =>
  `(NOT replay_effect_unknown OR ${operatorNow})`;

const BEGIN_REPLAY = preparedStatement(
  'attempt-replays.begin',
  // began_at and lands_by are the trigger's to write (migration 0025); the placeholder is not kept.
  `WITH begun AS (
     INSERT INTO attempt_replays (attempt_id, land_window_ms, lands_by) VALUES ($1, $2, now())
     RETURNING id, attempt_id)
   SELECT b.id, s.body,
          greatest(0, ceil(extract(epoch FROM s.replay_until - clock_timestamp()) * 1000))::float8
            AS ms_left
     FROM begun b JOIN attempt_sends s ON s.attempt_id = b.attempt_id`,
);

/** A replay that PostgreSQL let begin: its row, the bytes to send, and the window left. */
export interface BegunReplay {
  id: string;
  body: Buffer;
  /** How long until no replay may begin: the most a send may take before it is given up. */
  msLeft: number;
}

/** The constraint a replay's begin breaks when it may not be sent (migration 0025). */
export const REPLAY_REFUSED = 'attempt_replays_inside_key_window';

/**
 * Records a replay's begin, and only then hands out the bytes to send. PostgreSQL refuses it
 * (check_violation, REPLAY_REFUSED) at or after the key window less its margin, when nothing is
 * kept, for a settled attempt and for an ended job.
 */
export async function beginReplay(
  db: Queryable,
  attemptId: string,
  /** The provider's late-result window: until the begin plus this, the replay may still land. */
  landWindowMs: number,
): Promise<BegunReplay> {
  const { rows } = await db.query<{ id: string; body: Buffer; ms_left: number }>(
    BEGIN_REPLAY([attemptId, landWindowMs]),
  );
  const row = rows[0]!;
  return { id: row.id, body: row.body, msLeft: row.ms_left };
}

/** What a look made of a replay's answer. */
export type ReplayVerdict = 'answered' | 'refused' | 'in_progress' | 'no_news' | 'key_reused';

const ANSWER_REPLAY = preparedStatement(
  'attempt-replays.answer',
  `UPDATE attempt_replays SET answered_at = clock_timestamp(), http_status = $2, verdict = $3,
          detail = $4
    WHERE id = $1`,
);

/** Writes what came back to a replay and what the look made of it. */
export async function answerReplay(
  db: Queryable,
  replayId: string,
  answer: { httpStatus: number | undefined; verdict: ReplayVerdict; detail: object },
): Promise<void> {
  await db.query(
    ANSWER_REPLAY([
      replayId,
      answer.httpStatus ?? null,
      answer.verdict,
      JSON.stringify(answer.detail),
    ]),
  );
}

const REPLAY_WINDOW = preparedStatement(
  'attempt-sends.window',
  `SELECT first_sent_at, replay_until,
          clock_timestamp() >= replay_until AS over
     FROM attempt_sends WHERE attempt_id = $1`,
);

/** The key window of an attempt's first send, as PostgreSQL holds it. */
export interface ReplayWindow {
  firstSentAt: Date;
  replayUntil: Date;
  over: boolean;
}

/** The window an attempt's request was sent under; none when nothing was kept for it. */
export async function replayWindow(
  db: Queryable,
  attemptId: string,
): Promise<ReplayWindow | undefined> {
  const { rows } = await db.query<{
    first_sent_at: Date;
    replay_until: Date;
    over: boolean;
  }>(REPLAY_WINDOW([attemptId]));
  const row = rows[0];
  return (
    row && {
      firstSentAt: row.first_sent_at,
      replayUntil: row.replay_until,
      over: row.over,
    }
  );
}

const DROP_BODY_PAST_WINDOW = preparedStatement(
  'attempt-sends.drop-past-window',
  `UPDATE attempt_sends SET body = NULL
    WHERE attempt_id = $1 AND body IS NOT NULL AND clock_timestamp() >= replay_until`,
);

/** A look found the window over: the bytes can never be sent again, so they are not kept. */
export async function dropBodyPastWindow(db: Queryable, attemptId: string): Promise<void> {
  await db.query(DROP_BODY_PAST_WINDOW([attemptId]));
}
