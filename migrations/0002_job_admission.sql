-- When the job's workflow first ran (its admission activity). A job still without it after a
-- while lost its workflow start (a crash between the insert and the start): the sweeper heals it.
ALTER TABLE jobs ADD COLUMN admitted_at timestamptz;

CREATE INDEX jobs_awaiting_admission_idx ON jobs (created_at)
  WHERE admitted_at IS NULL AND terminal_status IS NULL;

-- Keyset pagination of an owner's jobs, newest first, with a stable tiebreak.
CREATE INDEX jobs_owner_page_idx ON jobs (owner_id, created_at DESC, id DESC);
DROP INDEX jobs_owner_created_idx;
