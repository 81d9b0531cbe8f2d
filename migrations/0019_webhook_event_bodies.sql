-- Issue 55. Every endpoint of a job's owner is sent the same bytes of an event: the job as its
-- owner reads it. The body is fixed once per event, before its first try to any endpoint, and
-- stored once, not once per endpoint; deliveries made before this keep the body they fixed.
CREATE TABLE webhook_event_bodies (
  job_id     uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  event_key  text NOT NULL,
  body       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, event_key)
);

-- A fixed body stays: every try to every endpoint signs these bytes.
CREATE FUNCTION webhook_event_bodies_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the body of event % of job % is fixed', OLD.event_key, OLD.job_id
    USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER webhook_event_bodies_fixed
  BEFORE UPDATE ON webhook_event_bodies
  FOR EACH ROW EXECUTE FUNCTION webhook_event_bodies_fixed();

-- A delivered delivery sent a body: its own (before this migration) or its event's. The check
-- spans two tables, so the trigger that keeps an ended delivery as it ended holds it too.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_check1;

CREATE OR REPLACE FUNCTION webhook_deliveries_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.state <> 'pending' AND NEW.state <> OLD.state THEN
    RAISE EXCEPTION 'webhook delivery % is % and stays so', OLD.id, OLD.state
      USING ERRCODE = 'check_violation';
  END IF;
  IF OLD.body IS NOT NULL AND NEW.body IS DISTINCT FROM OLD.body THEN
    RAISE EXCEPTION 'webhook delivery % has its body already', OLD.id
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.state = 'delivered' AND NEW.body IS NULL AND NOT EXISTS (
       SELECT 1 FROM webhook_event_bodies b
        WHERE b.job_id = NEW.job_id AND b.event_key = NEW.event_key) THEN
    RAISE EXCEPTION 'webhook delivery % cannot be delivered without a body', NEW.id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;
