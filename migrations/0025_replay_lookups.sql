-- A lost answer settled by the provider's own idempotency (issue 59): an unknown attempt of a
-- provider with a replay lookup is looked at by sending its first request again, byte for byte,
-- under the same key. Inside the provider's key window that returns the stored outcome of the
-- first request and does no work twice; after it, the same request is a new charge. So the
-- window is held here, on PostgreSQL's clock, where no code path can get round it.

-- The request as a call first sent it, kept for its replays: written before the request leaves
-- (so first_sent_at is never later than the provider's receipt of it), never moved.
CREATE TABLE attempt_sends (
  attempt_id     text PRIMARY KEY REFERENCES attempts (id) ON DELETE CASCADE,
  -- The body's bytes as sent; dropped (NULL) once the attempt is settled or a look finds its
  -- window over: nothing may replay it then.
  body           bytea,
  first_sent_at  timestamptz NOT NULL DEFAULT now(),
  -- The provider's key retention, and the margin kept short of it (clock skew between this
  -- database and the provider, and the replay's own time on the wire).
  key_window_ms  bigint NOT NULL CHECK (key_window_ms > 0),
  margin_ms      bigint NOT NULL CHECK (margin_ms > 0 AND margin_ms < key_window_ms),
  -- The last moment a replay may begin: first_sent_at + key_window - margin (set on insert).
  replay_until   timestamptz NOT NULL
);

-- Both times are PostgreSQL's, whatever an insert says: its clock, not a worker's.
CREATE FUNCTION attempt_sends_on_this_clock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.first_sent_at := now();
  NEW.replay_until := now() + (NEW.key_window_ms - NEW.margin_ms) * interval '1 millisecond';
  RETURN NEW;
END $$;

CREATE TRIGGER attempt_sends_on_postgres_clock
  BEFORE INSERT ON attempt_sends
  FOR EACH ROW EXECUTE FUNCTION attempt_sends_on_this_clock();

-- Only the body may change, and only to nothing: the window a request was sent under is fixed.
CREATE FUNCTION attempt_sends_keep_their_window() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.attempt_id <> OLD.attempt_id OR NEW.first_sent_at <> OLD.first_sent_at
     OR NEW.key_window_ms <> OLD.key_window_ms OR NEW.margin_ms <> OLD.margin_ms
     OR NEW.replay_until <> OLD.replay_until
     OR (NEW.body IS NOT NULL AND NEW.body IS DISTINCT FROM OLD.body) THEN
    RAISE EXCEPTION 'attempt_sends_fixed: the request attempt % was first sent with, and its key window, never change', OLD.attempt_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'attempt_sends_fixed';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER attempt_sends_fixed
  BEFORE UPDATE ON attempt_sends
  FOR EACH ROW EXECUTE FUNCTION attempt_sends_keep_their_window();

-- Until when a replay of this attempt may still land at the provider (the latest of those not
-- answered yet): while it may, no failure report settles the attempt, because a replay that
-- reaches the provider first does the work (migration 0010's rule for a call, for its replays).
-- Kept on the attempt's own row, so that a replay's begin and a failure's write take the same
-- row lock and the later one sees the other.
ALTER TABLE attempts ADD COLUMN replay_lands_by timestamptz,
  -- A replay's answer was lost (no news): it may have done the work. Until a later replay tells
  -- what the key did, no held report settles the attempt by machine; an operator's new word,
  -- given after it, still may.
  ADD COLUMN replay_effect_unknown boolean NOT NULL DEFAULT false;

-- A replay that may have done the work is evidence of work until told otherwise: no machine
-- settles such an attempt failed (a "no record" from a search, a held report); an operator may.
ALTER TABLE attempts
  ADD CONSTRAINT attempts_replay_in_doubt_is_not_failed_by_machine
    CHECK (NOT replay_effect_unknown OR state <> 'failed' OR error ->> 'code' = 'operator');

-- Each replay sent to look at an attempt: a look, recorded with the attempt, never an attempt.
CREATE TABLE attempt_replays (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  attempt_id   text NOT NULL REFERENCES attempt_sends (attempt_id) ON DELETE CASCADE,
  began_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- The provider's late-result window for it: until began_at + this, it may still land.
  land_window_ms bigint NOT NULL CHECK (land_window_ms > 0),
  lands_by     timestamptz NOT NULL,
  answered_at  timestamptz,
  -- The provider's status line, when one came.
  http_status  int,
  -- What the look made of it: answered (a 2xx), refused, in_progress, no_news, key_reused.
  verdict      text CHECK (verdict IN ('answered', 'refused', 'in_progress', 'no_news', 'key_reused')),
  -- What the provider said (an error's type and message), never the request's bytes.
  detail       jsonb
);
CREATE INDEX attempt_replays_of_attempt ON attempt_replays (attempt_id, began_at);

-- No replay begins at or after the window's end, for a settled attempt, or for an ended job:
-- the first would be a new charge at the provider, the others could do work nobody wants now.
CREATE FUNCTION attempt_replays_only_inside_the_key_window() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  kept attempt_sends;
  attempt_state text;
  job_status text;
BEGIN
  NEW.began_at := clock_timestamp();
  NEW.lands_by := NEW.began_at + NEW.land_window_ms * interval '1 millisecond';
  -- The attempt's row first (as a failure report takes it, then its sends row): the replay
  -- marks itself there, so a report written after this waits for it and then sees it.
  UPDATE attempts SET replay_lands_by = greatest(coalesce(replay_lands_by, NEW.lands_by), NEW.lands_by)
   WHERE id = NEW.attempt_id AND state = 'unknown'
   RETURNING state INTO attempt_state;
  SELECT j.terminal_status INTO job_status
    FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE a.id = NEW.attempt_id;
  IF attempt_state IS NULL THEN
    SELECT state INTO attempt_state FROM attempts WHERE id = NEW.attempt_id;
  END IF;
  SELECT * INTO kept FROM attempt_sends WHERE attempt_id = NEW.attempt_id FOR SHARE;
  IF kept.body IS NULL THEN
    RAISE EXCEPTION 'attempt_replays_inside_key_window: attempt % has no request kept to replay', NEW.attempt_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'attempt_replays_inside_key_window';
  END IF;
  IF clock_timestamp() >= kept.replay_until THEN
    RAISE EXCEPTION 'attempt_replays_inside_key_window: the key window of attempt % allowed replays until %', NEW.attempt_id, kept.replay_until
      USING ERRCODE = 'check_violation', CONSTRAINT = 'attempt_replays_inside_key_window';
  END IF;
  IF attempt_state IS DISTINCT FROM 'unknown' OR job_status IS NOT NULL THEN
    RAISE EXCEPTION 'attempt_replays_inside_key_window: attempt % is % and its job %; only an unknown attempt of an open job is replayed', NEW.attempt_id, attempt_state, coalesce(job_status, 'open')
      USING ERRCODE = 'check_violation', CONSTRAINT = 'attempt_replays_inside_key_window';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER attempt_replays_inside_key_window
  BEFORE INSERT ON attempt_replays
  FOR EACH ROW EXECUTE FUNCTION attempt_replays_only_inside_the_key_window();

-- A replay's begin is fixed once written: only its answer is filled in, once. Answered, it can
-- no longer land: the attempt may be settled by a report again, unless another is still out.
CREATE FUNCTION attempt_replays_answer_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.attempt_id <> OLD.attempt_id OR NEW.began_at <> OLD.began_at
     OR NEW.lands_by <> OLD.lands_by OR OLD.answered_at IS NOT NULL THEN
    RAISE EXCEPTION 'attempt_replays_answered_once: replay % of attempt % is written once', OLD.id, OLD.attempt_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'attempt_replays_answered_once';
  END IF;
  IF NEW.answered_at IS NOT NULL THEN
    UPDATE attempts SET replay_lands_by = (
      SELECT max(r.lands_by) FROM attempt_replays r
       WHERE r.attempt_id = NEW.attempt_id AND r.answered_at IS NULL AND r.id <> NEW.id),
           -- An answer that tells what the key did clears the doubt; a lost one raises it.
           replay_effect_unknown = (NEW.verdict = 'no_news' AND state = 'unknown')
     WHERE id = NEW.attempt_id;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER attempt_replays_answered_once
  BEFORE UPDATE ON attempt_replays
  FOR EACH ROW EXECUTE FUNCTION attempt_replays_answer_once();

-- A settled attempt is never replayed: its kept bytes go with its settling.
CREATE FUNCTION attempt_sends_drop_body_when_settled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE attempt_sends SET body = NULL WHERE attempt_id = NEW.id AND body IS NOT NULL;
  RETURN NULL;
END $$;

CREATE TRIGGER attempt_sends_dropped_when_settled
  AFTER UPDATE OF state ON attempts
  FOR EACH ROW WHEN (OLD.state IN ('running', 'unknown')
                     AND NEW.state IN ('succeeded', 'lost', 'failed', 'cancelled'))
  EXECUTE FUNCTION attempt_sends_drop_body_when_settled();
