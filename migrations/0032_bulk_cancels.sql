-- Cancels by query (issue 61): an operator cancels the open jobs a query finds (owner, provider,
-- status, created window), after a dry run, at most a bound at a time; running it again takes up
-- what is left (the jobs it cancelled are open no more). Each applied run is kept: who, why,
-- the query, and what the cancel answered for each job.

CREATE TABLE bulk_cancels (
  id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at       timestamptz NOT NULL DEFAULT now(),
  operator text NOT NULL CHECK (operator ~ '\S' AND char_length(operator) <= 200),
  reason   text NOT NULL CHECK (reason ~ '\S' AND char_length(reason) <= 1000),
  query    jsonb NOT NULL CHECK (jsonb_typeof(query) = 'object'),
  -- The open jobs the query found for this run (at most its bound).
  matched  integer NOT NULL CHECK (matched > 0)
);

CREATE TABLE bulk_cancel_jobs (
  bulk_cancel_id bigint NOT NULL REFERENCES bulk_cancels,
  job_id         uuid NOT NULL,
  -- cancelled, or refused (ended meanwhile, say: the cancel's own answer is the detail).
  result         text NOT NULL CHECK (result IN ('cancelled', 'refused')),
  detail         text NOT NULL,
  at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (bulk_cancel_id, job_id)
);

-- 0029's rule, said of whichever table keeps its rows so.
CREATE OR REPLACE FUNCTION report_settlements_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% rows are kept as written', TG_TABLE_NAME USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER bulk_cancels_kept
  BEFORE UPDATE OR DELETE ON bulk_cancels
  FOR EACH ROW EXECUTE FUNCTION report_settlements_kept();

CREATE TRIGGER bulk_cancel_jobs_kept
  BEFORE UPDATE OR DELETE ON bulk_cancel_jobs
  FOR EACH ROW EXECUTE FUNCTION report_settlements_kept();
