/**
 * Continuous certification's records (migration 0027): which certifications lost their
 * fallback and hedge eligibility, the window of calls a check reads, and the kept changes.
 */
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/** A certification, as the eligibility records name it. */
export interface CertificationKey {
  provider: string;
  model: string;
  jobType: string;
  contractVersion: string;
}

export interface Decertification extends CertificationKey {
  certifiedAt: Date;
  decertifiedAt: Date;
  decidedBy: string;
  attemptId: string | null;
  calls: number;
  rejected: number;
  rate: number;
  lowerBound: number;
  threshold: number;
  confidence: number;
  windowCalls: number;
  windowMs: number;
}

interface DecertificationRow {
  provider: string;
  model: string;
  job_type: string;
  contract_version: string;
  certified_at: Date;
  decertified_at: Date;
  decided_by: string;
  attempt_id: string | null;
  calls: number;
  rejected: number;
  rate: number;
  lower_bound: number;
  threshold: number;
  confidence: number;
  window_calls: number;
  window_ms: string;
}

const COLUMNS = `provider, model, job_type, contract_version, certified_at, decertified_at,
  decided_by, attempt_id, calls, rejected, rate, lower_bound, threshold, confidence,
  window_calls, window_ms`;

const toDecertification = (row: DecertificationRow): Decertification => ({
  provider: row.provider,
  model: row.model,
  jobType: row.job_type,
  contractVersion: row.contract_version,
  certifiedAt: row.certified_at,
  decertifiedAt: row.decertified_at,
  decidedBy: row.decided_by,
  attemptId: row.attempt_id,
  calls: row.calls,
  rejected: row.rejected,
  rate: row.rate,
  lowerBound: row.lower_bound,
  threshold: row.threshold,
  confidence: row.confidence,
  windowCalls: row.window_calls,
  windowMs: Number(row.window_ms),
});

// Every admission and every fallback's attempt reads these: prepared.
const DECERTIFIED_FOR_CONTRACT = preparedStatement(
  'eligibility.decertified-for-contract',
  `SELECT ${COLUMNS} FROM provider_decertifications WHERE job_type = $1 AND contract_version = $2`,
);

/** The certifications of one job type's contract that lost their eligibility. */
export async function decertifiedForContract(
  db: Queryable,
  key: { jobType: string; contractVersion: string },
): Promise<Decertification[]> {
  const { rows } = await db.query<DecertificationRow>(
    DECERTIFIED_FOR_CONTRACT([key.jobType, key.contractVersion]),
  );
  return rows.map(toDecertification);
}

const JOB_AND_DECERTIFICATION = preparedStatement(
  'eligibility.job-and-decertification',
  `SELECT j.job_type AS type, j.provider_plan[1] AS primary_provider,
          EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = j.id AND a.seq = $3) AS written,
          d.model, d.contract_version, d.decertified_at, d.rate, d.lower_bound, d.calls
     FROM jobs j
     LEFT JOIN provider_decertifications d ON d.provider = $2 AND d.job_type = j.job_type
    WHERE j.id = $1`,
);

/**
 * A job's type and primary, whether its attempt `seq` is written, and every loss of `provider`
 * for that type (any contract).
 */
export async function jobAndDecertifications(
  db: Queryable,
  jobId: string,
  provider: string,
  seq: number,
): Promise<
  | {
      jobType: string;
      primary: string | null;
      written: boolean;
      lost: Array<
        Pick<
          Decertification,
          'model' | 'contractVersion' | 'decertifiedAt' | 'rate' | 'lowerBound' | 'calls'
        >
      >;
    }
  | undefined
> {
  const { rows } = await db.query<{
    type: string;
    primary_provider: string | null;
    written: boolean;
    model: string | null;
    contract_version: string | null;
    decertified_at: Date | null;
    rate: number | null;
    lower_bound: number | null;
    calls: number | null;
  }>(JOB_AND_DECERTIFICATION([jobId, provider, seq]));
  const first = rows[0];
  if (!first) return undefined;
  return {
    jobType: first.type,
    primary: first.primary_provider,
    written: first.written,
    lost: rows
      .filter((row) => row.contract_version !== null)
      .map((row) => ({
        model: row.model!,
        contractVersion: row.contract_version!,
        decertifiedAt: row.decertified_at!,
        rate: row.rate!,
        lowerBound: row.lower_bound!,
        calls: row.calls!,
      })),
  };
}

const RECENT_ANSWERS = preparedStatement(
  'eligibility.recent-answers',
  `WITH cert AS (
     SELECT c.certified_at FROM certifications c
      WHERE c.provider = $1 AND c.model = $2 AND c.job_type = $3 AND c.contract_version = $4
        AND c.passed
        AND NOT EXISTS (SELECT 1 FROM provider_decertifications d
                         WHERE d.provider = c.provider AND d.model = c.model
                           AND d.job_type = c.job_type AND d.contract_version = c.contract_version)
   ), recent AS (
     SELECT a.call_outcome FROM attempts a JOIN jobs j ON j.id = a.job_id
      WHERE a.provider = $1 AND a.call_ended_at IS NOT NULL
        AND a.call_outcome IN ('won', 'lost', 'rejected')
        AND a.call_ended_at > (SELECT certified_at FROM cert)
        AND a.call_ended_at > now() - $6::bigint * interval '1 millisecond'
        AND j.job_type = $3
      ORDER BY a.call_ended_at DESC
      LIMIT $5
   )
   SELECT (SELECT certified_at FROM cert)::text AS certified_at,
          count(*)::int AS calls,
          (count(*) FILTER (WHERE call_outcome = 'rejected'))::int AS rejected
     FROM recent`,
);

/**
 * The window a check reads (with its certification's certified_at as PostgreSQL's text, exact to
 * the microsecond, for decertify to name it): the latest calls of `provider` on the job type that brought an
 * answer (won, lost or rejected), since its passing certification, at most `windowCalls` of
 * them and none older than `windowMs`. Nothing when there is no passing certification, or it
 * lost its eligibility already.
 */
export async function recentAnswers(
  db: Queryable,
  key: CertificationKey,
  window: { windowCalls: number; windowMs: number },
): Promise<{ certifiedAt: string; calls: number; rejected: number } | undefined> {
  const { rows } = await db.query<{ certified_at: string | null; calls: number; rejected: number }>(
    RECENT_ANSWERS([
      key.provider,
      key.model,
      key.jobType,
      key.contractVersion,
      window.windowCalls,
      window.windowMs,
    ]),
  );
  const row = rows[0];
  if (!row?.certified_at) return undefined;
  return { certifiedAt: row.certified_at, calls: row.calls, rejected: row.rejected };
}

const DECERTIFY = preparedStatement(
  'eligibility.decertify',
  `INSERT INTO provider_decertifications
     (provider, model, job_type, contract_version, certified_at, decided_by, attempt_id,
      calls, rejected, lower_bound, threshold, confidence, window_calls, window_ms)
   VALUES ($1, $2, $3, $4, $5::timestamptz, $6, $7, $8, $9, $10, $11, $12, $13, $14)
   ON CONFLICT DO NOTHING
   RETURNING provider`,
);

/**
 * Records the loss of a certification's eligibility; says whether this wrote it (not when it
 * was lost already, nor when the certification it read was replaced meanwhile: migration 0027).
 */
export async function decertify(
  db: Queryable,
  loss: Omit<Decertification, 'decertifiedAt' | 'rate' | 'certifiedAt'> & { certifiedAt: string },
): Promise<boolean> {
  const { rowCount } = await db.query(
    DECERTIFY([
      loss.provider,
      loss.model,
      loss.jobType,
      loss.contractVersion,
      loss.certifiedAt,
      loss.decidedBy,
      loss.attemptId,
      loss.calls,
      loss.rejected,
      loss.lowerBound,
      loss.threshold,
      loss.confidence,
      loss.windowCalls,
      loss.windowMs,
    ]),
  );
  return rowCount === 1;
}

const LIST_DECERTIFICATIONS = preparedStatement(
  'eligibility.list-decertified',
  `SELECT ${COLUMNS} FROM provider_decertifications ORDER BY provider, job_type, contract_version`,
);

/** Every certification that lost its eligibility now (each /metrics scrape reads them). */
export async function listDecertifications(db: Queryable): Promise<Decertification[]> {
  const { rows } = await db.query<DecertificationRow>(LIST_DECERTIFICATIONS([]));
  return rows.map(toDecertification);
}

export interface EligibilityChange extends CertificationKey {
  id: number;
  at: Date;
  change: 'lost' | 'regained';
  changedBy: string;
  detail: Record<string, unknown>;
}

/** The kept changes, oldest first (of one provider, when named). */
export async function listEligibilityChanges(
  db: Queryable,
  provider?: string,
): Promise<EligibilityChange[]> {
  const { rows } = await db.query<{
    id: string;
    at: Date;
    provider: string;
    model: string;
    job_type: string;
    contract_version: string;
    change: 'lost' | 'regained';
    changed_by: string;
    detail: Record<string, unknown>;
  }>(
    `SELECT id, at, provider, model, job_type, contract_version, change, changed_by, detail
       FROM provider_eligibility_changes WHERE $1::text IS NULL OR provider = $1 ORDER BY id`,
    [provider ?? null],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    at: row.at,
    provider: row.provider,
    model: row.model,
    jobType: row.job_type,
    contractVersion: row.contract_version,
    change: row.change,
    changedBy: row.changed_by,
    detail: row.detail,
  }));
}
