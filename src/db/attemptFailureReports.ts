/**
 * Reports that an attempt failed (a provider's signed callback, an operator's verdict): held
 * on the row while its call may still answer, applied once it cannot.
 */
import { asChangedOrFound } from './attemptCalls';
import { NO_REPLAY_MAY_LAND, noReplayInDoubt } from './attemptReplays';
import { COLUMNS, type AttemptRecord, type AttemptRow } from './attempts';
import { type Queryable } from './pool';
import { preparedStatement } from './statements';

/**
 * The error a held failure report leaves on the attempt it settles: the operator's verdict, or
 * the provider's signed callback, with why it settles now.
 */
export const REPORT_ERROR = (report: string, why: string) => `jsonb_build_object(
    'code', CASE WHEN ${report} ? 'operator' THEN 'operator' ELSE 'provider_callback' END,
    'message', ${report} ->> 'message')
  || CASE WHEN ${report} ? 'operator'
          THEN jsonb_build_object('operator', ${report} ->> 'operator') ELSE '{}'::jsonb END
  || jsonb_build_object('settledBecause', ${why})`;

/**
 * The report that stands: the first one held, unless an operator reports now. An operator's
 * word settles even a call that answered a 2xx (they looked), and so replaces a provider's.
 */
const REPORT = `(CASE WHEN $2::jsonb ? 'operator' THEN $2::jsonb
                     ELSE coalesce(reported_failure, $2::jsonb) END)`;

/**
 * The SQL of "the held (or new) failure report settles this attempt now"; see HELD_REPORT_SETTLES
 * (attemptSettlement.ts). A call
 * whose end is not written is over only once its window and then the provider's grace (as it
 * was when the call began) have passed: the worker stops listening when the window closes (never later, see
 * callProvider), and the grace is for it to write what it read, a 2xx above all.
 */
const REPORT_SETTLES = `(${REPORT} IS NOT NULL
                        AND (success_answered_at IS NULL OR $2::jsonb ? 'operator')
                        AND ${NO_REPLAY_MAY_LAND} AND ${noReplayInDoubt(`$2::jsonb ? 'operator'`)}
                        AND (started_at IS NULL OR call_ended_at IS NOT NULL
                             OR coalesce(call_deadline_at, 'infinity')
                                  + coalesce(call_grace_ms, 0) * interval '1 millisecond' <= now()))`;

const REPORT_FAILURE = preparedStatement(
  'attempts.report-failure',
  `UPDATE attempts
      SET reported_failure = ${REPORT},
          state = CASE WHEN ${REPORT_SETTLES} THEN 'failed' ELSE state END,
          error = CASE WHEN ${REPORT_SETTLES}
                       THEN ${REPORT_ERROR(REPORT, `'its call can no longer answer, and no success answer came'`)}
                            || CASE WHEN error IS NULL THEN '{}'::jsonb
                                    ELSE jsonb_build_object('earlier', error) END
                       ELSE error END,
          finished_at = CASE WHEN ${REPORT_SETTLES} THEN now() ELSE finished_at END,
          updated_at = now()
    WHERE id = $1 AND ${REPORT} IS NOT NULL
      AND state IN ('starting', 'running', 'unknown')
    RETURNING ${COLUMNS}`,
);

/** A report that an attempt failed: a provider's signed callback, or an operator's verdict. */
export interface FailureReport {
  message: string;
  at: string;
  /** Set when an operator said so (then the attempt's error names them). */
  operator?: string;
}

/** An operator's verdict that an attempt did nothing, as a report (applied or held). */
export function operatorsFailure(operator: string, reason: string): FailureReport {
  return { message: reason, at: new Date().toISOString(), operator };
}

/**
 * A report that an attempt failed (`report` null: apply the one held already): a provider's
 * signed callback, or an operator's verdict. It settles the attempt `failed` only when the call
 * can no longer answer (it never began, it ended, or its late-result window and the provider's
 * grace are over) and no success answer came: a call still in flight may yet answer success,
 * and a success answer outranks the report. Otherwise the report is held on the row, and the
 * call's own end, or the next look after the grace, applies it. The first report held stays,
 * unless an operator reports: the operator's word replaces it.
 */
export async function reportAttemptFailure(
  db: Queryable,
  id: string,
  report: FailureReport | null,
): Promise<AttemptRecord> {
  const { rows } = await db.query<AttemptRow>(
    REPORT_FAILURE([id, report === null ? null : JSON.stringify(report)]),
  );
  return asChangedOrFound(db, id, rows);
}
