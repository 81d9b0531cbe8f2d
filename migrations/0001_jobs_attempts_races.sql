-- Jobs, attempts and lost races (docs/architecture.md, "The data model"). The database refuses what must never happen;
-- the application code is not trusted to remember.

CREATE TABLE jobs (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id            text NOT NULL CHECK (owner_id ~ '^[\x20-\x7e]{1,64}$'),
  -- Printable ASCII only: no NUL, no control characters (the API answers 400 before we get here).
  idempotency_key     text NOT NULL CHECK (idempotency_key ~ '^[\x20-\x7e]{1,255}$'),
  request_fingerprint text NOT NULL CHECK (request_fingerprint ~ '^[0-9a-f]{64}$'),
  job_type            text NOT NULL,
  input               jsonb NOT NULL,
  provider_plan       text[] NOT NULL CHECK (cardinality(provider_plan) >= 1),
  mode                text NOT NULL DEFAULT 'exclusive' CHECK (mode IN ('exclusive', 'hedged')),
  workflow_id         text NOT NULL UNIQUE,
  -- Moves only when the result slot or the terminal status changes.
  version             bigint NOT NULL DEFAULT 0 CHECK (version >= 0),
  completed_by        text,
  result              jsonb,
  terminal_status     text CHECK (terminal_status IN ('succeeded', 'failed', 'cancelled')),
  failure             jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  finished_at         timestamptz,
  UNIQUE (owner_id, idempotency_key),
  -- A result exists exactly when an attempt won, and only a won job is succeeded.
  CHECK ((completed_by IS NULL) = (result IS NULL)),
  CHECK ((completed_by IS NOT NULL) = (terminal_status IS NOT DISTINCT FROM 'succeeded')),
  CHECK ((terminal_status IS NULL) = (finished_at IS NULL)),
  CHECK (failure IS NULL OR terminal_status IN ('failed', 'cancelled'))
);

CREATE INDEX jobs_owner_created_idx ON jobs (owner_id, created_at DESC, id DESC);

CREATE TABLE attempts (
  -- Derived from (job, seq) so that every layer, and the provider, sees the same identity.
  id            text PRIMARY KEY,
  job_id        uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  seq           integer NOT NULL CHECK (seq >= 1),
  provider      text NOT NULL,
  state         text NOT NULL DEFAULT 'starting'
                CHECK (state IN ('starting', 'running', 'succeeded', 'lost', 'failed', 'unknown', 'cancelled')),
  exclusive     boolean NOT NULL,
  -- The job version this attempt read when it started: the expected value of its CAS.
  read_version  bigint NOT NULL,
  error         jsonb,
  started_at    timestamptz,
  finished_at   timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (job_id, seq),
  UNIQUE (job_id, id),
  CHECK (id = job_id::text || ':' || seq::text),
  CHECK ((state IN ('starting', 'running', 'unknown')) = (finished_at IS NULL))
);

-- At most one exclusive attempt in flight per job. An unknown attempt is in flight:
-- the provider may still be working on it.
CREATE UNIQUE INDEX attempts_one_in_flight_per_job
  ON attempts (job_id)
  WHERE exclusive AND state IN ('starting', 'running', 'unknown');

-- The winner must be an attempt of the same job.
ALTER TABLE jobs
  ADD CONSTRAINT jobs_completed_by_attempt_of_job
  FOREIGN KEY (id, completed_by) REFERENCES attempts (job_id, id) DEFERRABLE INITIALLY DEFERRED;

-- Attempt states move forward only.
CREATE FUNCTION attempts_guard_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id <> OLD.id OR NEW.job_id <> OLD.job_id OR NEW.seq <> OLD.seq
     OR NEW.provider <> OLD.provider OR NEW.exclusive <> OLD.exclusive
     OR NEW.read_version <> OLD.read_version THEN
    RAISE EXCEPTION 'attempt % identity is immutable', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.state = OLD.state THEN
    RETURN NEW;
  END IF;
  IF NOT (
       (OLD.state = 'starting' AND NEW.state IN ('running', 'failed', 'unknown', 'cancelled'))
    OR (OLD.state = 'running'  AND NEW.state IN ('succeeded', 'lost', 'failed', 'unknown', 'cancelled'))
    OR (OLD.state = 'unknown'  AND NEW.state IN ('succeeded', 'lost', 'failed', 'cancelled'))
  ) THEN
    RAISE EXCEPTION 'attempt % cannot move from % to %', OLD.id, OLD.state, NEW.state
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER attempts_guard_transition
  BEFORE UPDATE ON attempts
  FOR EACH ROW EXECUTE FUNCTION attempts_guard_transition();

-- Once a job is terminal its outcome never changes: no overwrite of the winner, no merge.
CREATE FUNCTION jobs_guard_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.owner_id <> OLD.owner_id OR NEW.idempotency_key <> OLD.idempotency_key
     OR NEW.request_fingerprint <> OLD.request_fingerprint OR NEW.workflow_id <> OLD.workflow_id
     OR NEW.job_type <> OLD.job_type OR NEW.input <> OLD.input
     OR NEW.provider_plan <> OLD.provider_plan OR NEW.mode <> OLD.mode THEN
    RAISE EXCEPTION 'job % intent is immutable', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF OLD.terminal_status IS NOT NULL AND (
       NEW.terminal_status IS DISTINCT FROM OLD.terminal_status
    OR NEW.completed_by IS DISTINCT FROM OLD.completed_by
    OR NEW.result IS DISTINCT FROM OLD.result
    OR NEW.failure IS DISTINCT FROM OLD.failure) THEN
    RAISE EXCEPTION 'job % is % and its outcome is final', OLD.id, OLD.terminal_status
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.version < OLD.version THEN
    RAISE EXCEPTION 'job % version cannot go back', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER jobs_guard_outcome
  BEFORE UPDATE ON jobs
  FOR EACH ROW EXECUTE FUNCTION jobs_guard_outcome();

-- Every compare-and-swap that touched zero rows: a late or losing result, discarded.
CREATE TABLE race_events (
  id                 bigserial PRIMARY KEY,
  job_id             uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  losing_attempt_id  text NOT NULL,
  winning_attempt_id text,
  expected_version   bigint NOT NULL,
  observed_version   bigint NOT NULL,
  occurred_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (losing_attempt_id),
  FOREIGN KEY (job_id, losing_attempt_id) REFERENCES attempts (job_id, id),
  FOREIGN KEY (job_id, winning_attempt_id) REFERENCES attempts (job_id, id),
  CHECK (winning_attempt_id IS NULL OR winning_attempt_id <> losing_attempt_id)
);

CREATE INDEX race_events_job_idx ON race_events (job_id, occurred_at);
