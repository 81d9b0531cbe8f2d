-- Fair shares between owners (issue 30, item 8): what each owner may take, kept here so that every
-- API replica enforces the same limits.

-- Each owner's create bucket: `tokens` as of `refilled_at` (PostgreSQL's clock). A create takes
-- one token in a single UPDATE that refills by the elapsed time first (src/db/ownerLimits.ts); the
-- row lock makes two replicas' takes of the last token one after the other, so one of them fails.
-- The refill rate and size are settings (docs/configuration.md), not stored: changing them applies
-- to every bucket at its next take.
CREATE TABLE owner_create_buckets (
  owner_id text PRIMARY KEY,
  tokens double precision NOT NULL CHECK (tokens >= 0),
  refilled_at timestamptz NOT NULL
);

-- The open-jobs limit counts an owner's jobs that have not ended, under a per-owner lock at each
-- create: this index keeps that count to the owner's open jobs. IF NOT EXISTS: on a large table an
-- operator may build it beforehand with CREATE INDEX CONCURRENTLY (docs/operators.md).
CREATE INDEX IF NOT EXISTS jobs_open_by_owner_idx ON jobs (owner_id) WHERE terminal_status IS NULL;
