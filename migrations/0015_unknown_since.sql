-- When an attempt last became unknown (issue 35): what the histogram of time spent unknown
-- measures from, and what the oldest-unknown gauge reads. Kept by the database, so every path
-- that makes an attempt unknown (a call cut off, a worker lost mid-call, a sweep) sets it
-- without knowing about it. An attempt never goes back to unknown once settled (migration 0001),
-- so it is written once per attempt at most.
ALTER TABLE attempts ADD COLUMN unknown_since timestamptz;

CREATE FUNCTION attempts_note_unknown_since() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.unknown_since := now();
  RETURN NEW;
END $$;

CREATE TRIGGER attempts_note_unknown_since
  BEFORE UPDATE OF state ON attempts
  FOR EACH ROW
  WHEN (OLD.state <> 'unknown' AND NEW.state = 'unknown')
  EXECUTE FUNCTION attempts_note_unknown_since();

-- Attempts unknown before this migration: the start of their call is the best we know.
UPDATE attempts SET unknown_since = coalesce(started_at, created_at) WHERE state = 'unknown';
