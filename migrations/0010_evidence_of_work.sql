-- Two ways to charge twice, closed in the database itself.
--
-- 1. A provider with side effects that answered 2xx has done the work as far as we can know,
--    whatever its body says (a "pending" status, another idempotency key): no "no record" from
--    its status lookup and no failure report may settle that attempt `failed`. Only an
--    operator may, having looked.
-- 2. A key is released only once nothing of its job can still take effect: no attempt starting,
--    running or unknown, and no call that may still land (its late-result window still open).
ALTER TABLE attempts
  -- When a provider with side effects answered this attempt's call with a 2xx (evidence of work).
  ADD COLUMN success_answered_at timestamptz,
  -- Until when the call may still land: its start plus the provider's late-result window.
  ADD COLUMN call_deadline_at timestamptz,
  -- A signed "failed" callback that came while the call could still answer: it settles the
  -- attempt once the call is over without a success answer ({"message": …, "at": …}).
  ADD COLUMN reported_failure jsonb,
  -- Why the call's cost is recorded as unknown when it was stated but could not be a price
  -- (out of range): the winner is recorded all the same.
  ADD COLUMN cost_unknown_reason text;

ALTER TABLE attempts
  ADD CONSTRAINT attempts_success_answer_is_not_failed_by_machine
    CHECK (success_answered_at IS NULL OR state NOT IN ('failed', 'cancelled')
           OR error ->> 'code' = 'operator'),
  ADD CONSTRAINT attempts_success_answer_after_start
    CHECK (success_answered_at IS NULL OR started_at IS NOT NULL),
  ADD CONSTRAINT attempts_call_deadline_after_start
    CHECK (call_deadline_at IS NULL OR (started_at IS NOT NULL AND call_deadline_at >= started_at));

-- Whether an attempt may still take effect: the one definition the release trigger, the
-- release statement and the API's refusal share.
CREATE FUNCTION attempt_may_take_effect(a attempts) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT a.state IN ('starting', 'running', 'unknown')
      OR (a.started_at IS NOT NULL AND a.call_ended_at IS NULL
          AND coalesce(a.call_deadline_at, 'infinity') > now())
$$;

CREATE FUNCTION jobs_refuse_release_while_attempts_open() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  open_attempt text;
BEGIN
  SELECT a.id INTO open_attempt FROM attempts a
   WHERE a.job_id = NEW.id AND attempt_may_take_effect(a)
   ORDER BY a.seq LIMIT 1;
  IF open_attempt IS NOT NULL THEN
    RAISE EXCEPTION 'jobs_release_only_when_settled: job % cannot release its key, attempt % may still take effect', NEW.id, open_attempt
      USING ERRCODE = 'check_violation', CONSTRAINT = 'jobs_release_only_when_settled';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER jobs_release_only_when_settled
  BEFORE UPDATE OF key_release ON jobs
  FOR EACH ROW WHEN (OLD.key_release IS NULL AND NEW.key_release IS NOT NULL)
  EXECUTE FUNCTION jobs_refuse_release_while_attempts_open();
