-- Blocked jobs sleep (issue 34). An unknown attempt of an open job is looked at again by the
-- workers' reconciler, not by timers in its workflow: each look writes when the next one is due
-- (backoff from the first pause, doubling to the longest, or sooner when the not-found rule asks
-- for it). A blocked workflow then neither runs nor grows its history, so its run need not stay
-- cached in a worker.
--
-- While an attempt is unknown, next_check_at is when its next look is due. When an unknown
-- attempt settles (by any path: a look, a late answer, a callback, an operator) it becomes due
-- at once: the reconciler wakes the attempt's workflow, which may be asleep on it, and then
-- clears it. The wake-up is held here, not only sent: a worker killed between settling an
-- attempt and signalling its workflow leaves the row due, and another worker sends it.
ALTER TABLE attempts
  ADD COLUMN next_check_at timestamptz,
  -- The pause that led to next_check_at; the next one doubles it, up to the longest.
  ADD COLUMN check_delay_ms integer CHECK (check_delay_ms > 0),
  -- The last look found that only an operator can settle it (its workflow has been told once).
  ADD COLUMN needs_operator boolean NOT NULL DEFAULT false;

CREATE INDEX attempts_checks_due ON attempts (next_check_at) WHERE next_check_at IS NOT NULL;

CREATE FUNCTION attempts_wake_on_settle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.next_check_at := now();
  RETURN NEW;
END $$;

CREATE TRIGGER attempts_wake_on_settle
  BEFORE UPDATE OF state ON attempts
  FOR EACH ROW
  WHEN (OLD.state = 'unknown' AND NEW.state <> 'unknown')
  EXECUTE FUNCTION attempts_wake_on_settle();
