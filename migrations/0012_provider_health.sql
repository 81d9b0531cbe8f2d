-- A provider's bad day, shared by every worker (issue 32): a cooldown a 429 with Retry-After asked
-- for, and a circuit breaker. No new attempt is created for a provider while it cools down or its
-- breaker is not closed (src/db/attempts.ts, createAttempt), except the one probe a half-open
-- breaker lets through. Reconciliation of attempts already made never looks here.
CREATE TABLE provider_health (
  provider text PRIMARY KEY,
  -- No new attempt before this time (PostgreSQL's clock): the latest Retry-After heard, capped.
  cooldown_until timestamptz,
  breaker text NOT NULL DEFAULT 'closed' CHECK (breaker IN ('closed', 'open', 'half_open')),
  -- When the breaker last opened: its cool-off runs from here.
  opened_at timestamptz,
  -- Why it opened, in words (shown by `onejob providers status` and in the job's skip note).
  reason text,
  -- Half-open: the attempt let through as the probe, and when.
  probe_attempt_id text,
  probe_started_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (breaker = 'closed' OR opened_at IS NOT NULL),
  CHECK ((breaker = 'half_open') = (probe_attempt_id IS NOT NULL AND probe_started_at IS NOT NULL))
);

-- The probe an attempt was: its end closes or re-opens the breaker.
ALTER TABLE attempts ADD COLUMN breaker_probe boolean NOT NULL DEFAULT false;

-- The breaker reads a provider's latest call ends when one of its calls fails.
CREATE INDEX IF NOT EXISTS attempts_provider_call_ends_idx
  ON attempts (provider, call_ended_at DESC) WHERE call_ended_at IS NOT NULL;
