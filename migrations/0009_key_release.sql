-- An operator may release the key of an ended job, so that the same (owner, key) starts a new
-- job: its next generation. Keys otherwise never expire. The old job stays, released and linked
-- to its successor; at most one job per (owner, key) is unreleased at any time.
ALTER TABLE jobs
  ADD COLUMN key_generation integer NOT NULL DEFAULT 1 CHECK (key_generation >= 1),
  -- Who released the key, why and when: {"operator": …, "reason": …, "at": …}.
  ADD COLUMN key_release jsonb,
  ADD COLUMN supersedes uuid UNIQUE REFERENCES jobs (id),
  ADD COLUMN superseded_by uuid UNIQUE REFERENCES jobs (id);

ALTER TABLE jobs
  -- Only an ended job's key may be released: a running job keeps answering its key.
  ADD CONSTRAINT jobs_release_only_when_ended
    CHECK (key_release IS NULL OR terminal_status IS NOT NULL),
  ADD CONSTRAINT jobs_release_is_recorded
    CHECK (key_release IS NULL OR (key_release ? 'operator' AND key_release ? 'reason'
                                   AND key_release ? 'at')),
  -- A later generation always names the job it supersedes, and only a released job has a
  -- successor.
  ADD CONSTRAINT jobs_generation_supersedes
    CHECK ((key_generation = 1) = (supersedes IS NULL)),
  ADD CONSTRAINT jobs_superseded_only_when_released
    CHECK (superseded_by IS NULL OR key_release IS NOT NULL);

-- One job per (owner, key, generation), and one unreleased job per (owner, key): the key's
-- live job, which creates find and replay.
CREATE UNIQUE INDEX jobs_key_generation_idx ON jobs (owner_id, idempotency_key, key_generation);
CREATE UNIQUE INDEX jobs_live_key_idx ON jobs (owner_id, idempotency_key) WHERE key_release IS NULL;
ALTER TABLE jobs DROP CONSTRAINT jobs_owner_id_idempotency_key_key;
