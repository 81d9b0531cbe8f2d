-- When the provider call of an attempt ended (answered, failed, or was cut off at its late-result
-- window). Until then the original request can still land, so a status lookup's "never
-- processed" is not evidence yet.
ALTER TABLE attempts ADD COLUMN call_ended_at timestamptz;
ALTER TABLE attempts ADD CONSTRAINT attempts_call_ends_after_start
  CHECK (call_ended_at IS NULL OR started_at IS NOT NULL);

-- The hedge delay reads the p95 of a provider's recent successful attempts: this index holds
-- exactly those rows in the order the query wants them.
CREATE INDEX attempts_recent_successes_idx
  ON attempts (provider, finished_at DESC)
  WHERE state = 'succeeded' AND started_at IS NOT NULL;

-- Attempts that may still take effect, few at any time: /metrics and the sweeper read them
-- without scanning the whole table.
CREATE INDEX attempts_in_flight_idx
  ON attempts (state, job_id)
  WHERE state IN ('starting', 'running', 'unknown');

-- Open jobs, for the sweeper's repair of jobs whose workflow closed.
CREATE INDEX jobs_open_idx ON jobs (created_at, id) WHERE terminal_status IS NULL;

-- Every signed provider callback we accepted, by the digest of what was signed: a replay of the
-- same callback (within its tolerance window) changes nothing and sends no signal.
CREATE TABLE provider_callbacks (
  provider     text NOT NULL,
  digest       text NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$'),
  attempt_id   text NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
  signed_at    timestamptz NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now(),
  outcome      jsonb NOT NULL,
  PRIMARY KEY (provider, digest)
);
