import type { Queryable } from './pool';
import { preparedStatement } from './statements';

export interface CertificationRecord {
  provider: string;
  model: string;
  jobType: string;
  contractVersion: string;
  passed: boolean;
  report: unknown;
  certifiedAt: Date;
}

interface CertificationRow {
  provider: string;
  model: string;
  job_type: string;
  contract_version: string;
  passed: boolean;
  report: unknown;
  certified_at: Date;
}

const toRecord = (row: CertificationRow): CertificationRecord => ({
  provider: row.provider,
  model: row.model,
  jobType: row.job_type,
  contractVersion: row.contract_version,
  passed: row.passed,
  report: row.report,
  certifiedAt: row.certified_at,
});

/** Stores a verdict; a new run for the same contract version replaces the previous one. */
export async function saveCertification(
  db: Queryable,
  record: Omit<CertificationRecord, 'certifiedAt'>,
): Promise<void> {
  await db.query(
    `INSERT INTO certifications (provider, model, job_type, contract_version, passed, report)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (provider, model, job_type, contract_version)
     DO UPDATE SET passed = EXCLUDED.passed, report = EXCLUDED.report, certified_at = now()`,
    [
      record.provider,
      record.model,
      record.jobType,
      record.contractVersion,
      record.passed,
      JSON.stringify(record.report),
    ],
  );
}

export async function findCertification(
  db: Queryable,
  key: { provider: string; model: string; jobType: string; contractVersion: string },
): Promise<CertificationRecord | undefined> {
  const { rows } = await db.query<CertificationRow>(
    'SELECT * FROM certifications WHERE provider = $1 AND model = $2 AND job_type = $3 AND contract_version = $4',
    [key.provider, key.model, key.jobType, key.contractVersion],
  );
  return rows[0] && toRecord(rows[0]);
}

// Every admission reads these: prepared, with its columns named (see preparedStatement).
const CERTIFICATIONS_FOR_CONTRACT = preparedStatement(
  'certifications.for-contract',
  `SELECT provider, model, job_type, contract_version, passed, report, certified_at
     FROM certifications WHERE job_type = $1 AND contract_version = $2`,
);

/** Every verdict for one job type's contract version, for checking a whole plan in one query. */
export async function findCertificationsForContract(
  db: Queryable,
  key: { jobType: string; contractVersion: string },
): Promise<CertificationRecord[]> {
  const { rows } = await db.query<CertificationRow>(
    CERTIFICATIONS_FOR_CONTRACT([key.jobType, key.contractVersion]),
  );
  return rows.map(toRecord);
}
