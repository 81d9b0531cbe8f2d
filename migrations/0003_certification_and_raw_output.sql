-- What a provider answered when the answer broke the job type's contract: kept on the attempt
-- for inspection, never copied to the job.
ALTER TABLE attempts ADD COLUMN raw_output jsonb;

-- Why steps of the plan were skipped (e.g. an uncertified fallback), in order.
ALTER TABLE jobs ADD COLUMN notes jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(notes) = 'array');

-- A provider's verdict for one job type's contract version: failover goes only to providers
-- certified for the contract in force, so a changed prompt or schema needs a new run.
CREATE TABLE certifications (
  provider         text NOT NULL,
  model            text NOT NULL,
  job_type         text NOT NULL,
  contract_version text NOT NULL CHECK (contract_version ~ '^[0-9a-f]{16}$'),
  passed           boolean NOT NULL,
  report           jsonb NOT NULL,
  certified_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, model, job_type, contract_version)
);
