-- Issue 54. Temporal runs an activity at least once, and operators terminate and reset runs: one
-- attempt's provider call may be executed twice, at the same time, or after its run has closed.

-- 1. The call belongs to the execution that began it. The begin (`starting → running`) draws a
--    token and hands it to that execution alone; the call's end, its ledger line and its evidence
--    of work are written only by a statement that names it (src/db/attemptCalls.ts). Any other
--    execution sends nothing and writes nothing. Attempts begun before this migration have none.
ALTER TABLE attempts
  ADD COLUMN call_token uuid,
  ADD CONSTRAINT attempts_call_token_with_start CHECK (call_token IS NULL OR started_at IS NOT NULL),
  -- The provider's grace after the call's window, as it was when the call began: a failure
  -- report (a callback, an operator's) settles a call whose end is not written only once its
  -- window and this grace have passed, whoever applies it (the API, the CLI, a look).
  ADD COLUMN call_grace_ms integer CHECK (call_grace_ms >= 0),
  ADD CONSTRAINT attempts_call_grace_with_start CHECK (call_grace_ms IS NULL OR started_at IS NOT NULL);

-- 2. Every ending of a job settles what it left in flight, whoever writes it (its workflow, the
--    API with no workflow left, a late answer, an operator): an attempt still `starting` can never
--    be sent (a begin needs an open job), so it is `cancelled`; one `running` may still take
--    effect, so it is `unknown`, and looked at at once like any unknown. The ending itself never
--    waits for an attempt row another transaction holds (one writing its own end settles it;
--    the sweeper settles, waiting, whatever is left); the winner of a compare-and-swap is not
--    touched (its own transaction marks it).
CREATE FUNCTION settle_attempts_of_ended_job(
  ended_job uuid, ending text, winner text, skip_locked boolean) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  open_ids text[];
  settled integer;
BEGIN
  IF skip_locked THEN
    SELECT array_agg(a.id) INTO open_ids FROM (
      SELECT id FROM attempts
       WHERE job_id = ended_job AND state IN ('starting', 'running') AND id IS DISTINCT FROM winner
       ORDER BY id FOR UPDATE SKIP LOCKED) a;
  ELSE
    SELECT array_agg(a.id) INTO open_ids FROM (
      SELECT id FROM attempts
       WHERE job_id = ended_job AND state IN ('starting', 'running') AND id IS DISTINCT FROM winner
       ORDER BY id FOR UPDATE) a;
  END IF;
  IF open_ids IS NULL THEN
    RETURN 0;
  END IF;
  UPDATE attempts
     SET state = CASE WHEN state = 'starting' THEN 'cancelled' ELSE 'unknown' END,
         error = CASE
                   WHEN state = 'starting' THEN jsonb_build_object(
                     'code', 'job_not_open',
                     'message', 'the job was ' || ending || ' before the request left; nothing was sent')
                   ELSE jsonb_build_object(
                     'code', 'job_ended',
                     'message', 'the job was ' || ending || ' while the call was out; it may still take effect')
                     || CASE WHEN error IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('earlier', error) END
                 END,
         finished_at = CASE WHEN state = 'starting' THEN now() END,
         -- A job that ended without a result: what its call did is looked up at once.
         next_check_at = CASE WHEN state = 'running' AND ending <> 'succeeded'
                              THEN now() ELSE next_check_at END,
         updated_at = now()
   WHERE id = ANY (open_ids) AND state IN ('starting', 'running');
  GET DIAGNOSTICS settled = ROW_COUNT;
  RETURN settled;
END $$;

CREATE FUNCTION jobs_settle_attempts_on_end() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM settle_attempts_of_ended_job(NEW.id, NEW.terminal_status, NEW.completed_by, true);
  RETURN NULL;
END $$;

CREATE TRIGGER jobs_settle_attempts_on_end
  AFTER UPDATE OF terminal_status ON jobs
  FOR EACH ROW
  WHEN (OLD.terminal_status IS NULL AND NEW.terminal_status IS NOT NULL)
  EXECUTE FUNCTION jobs_settle_attempts_on_end();

-- 3. A result that is not recorded because its job had ended without one (a charge that answers
--    after its owner's cancel), or because its attempt had been settled failed or cancelled
--    already (a 2xx that came after a verdict), is told to the owner: `job.late_result`, once per
--    attempt, written by the transaction that records the race.
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_events_check;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_events_check CHECK (
  cardinality(events) >= 1
  AND events <@ ARRAY['job.succeeded', 'job.failed', 'job.cancelled', 'job.needs_operator',
                      'job.late_result']);
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_check CHECK (
  event IN ('job.succeeded', 'job.failed', 'job.cancelled', 'job.needs_operator', 'job.late_result'));

CREATE FUNCTION webhook_late_result() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (job_id, endpoint_id, event, event_key)
  SELECT j.id, e.id, 'job.late_result', 'job.late_result:' || a.id
    FROM attempts a
    JOIN jobs j ON j.id = a.job_id
    JOIN webhook_endpoints e ON e.owner_id = j.owner_id
   WHERE a.id = NEW.losing_attempt_id
     AND (j.terminal_status IN ('cancelled', 'failed') OR a.state IN ('failed', 'cancelled'))
     AND e.deleted_at IS NULL AND e.disabled_at IS NULL
     AND 'job.late_result' = ANY (e.events)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER race_events_webhook_late_result
  AFTER INSERT ON race_events
  FOR EACH ROW
  EXECUTE FUNCTION webhook_late_result();

-- Endpoints that take every event (the default at registration) take the new one too.
UPDATE webhook_endpoints SET events = array_append(events, 'job.late_result')
 WHERE events @> ARRAY['job.succeeded', 'job.failed', 'job.cancelled', 'job.needs_operator'];
