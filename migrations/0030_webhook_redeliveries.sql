-- Webhook redelivery (issue 61): an event sent again to an endpoint, asked by its owner or an
-- operator (a receiver that was down, or lost what it got). A delivery that ended stays as it
-- ended (0016): the redelivery is a new delivery of the same event, sent with the same
-- webhook-id (the first delivery's id) and the same bytes, so a receiver that kept the first one
-- recognises it; who asked and why are on its row.
ALTER TABLE webhook_deliveries
  -- The first delivery of this event to this endpoint: its id is the webhook-id sent.
  ADD COLUMN redelivery_of uuid REFERENCES webhook_deliveries (id),
  ADD COLUMN redelivered_by text CHECK (redelivered_by ~ '\S' AND char_length(redelivered_by) <= 300),
  ADD COLUMN redelivery_reason text CHECK (char_length(redelivery_reason) <= 1000),
  ADD CONSTRAINT webhook_deliveries_redelivery_says_who
    CHECK ((redelivery_of IS NULL) = (redelivered_by IS NULL)
           AND (redelivery_of IS NULL) = (redelivery_reason IS NULL));

-- A redelivery is a second row of the same event to the same endpoint: one row per (job,
-- endpoint, event) holds for first deliveries only (the endings' ON CONFLICT DO NOTHING still
-- meets it).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_job_id_endpoint_id_event_key_key;
CREATE UNIQUE INDEX webhook_deliveries_one_first_per_event
  ON webhook_deliveries (job_id, endpoint_id, event_key) WHERE redelivery_of IS NULL;

-- At most one redelivery of a delivery waits at a time: asking again while one waits adds none.
CREATE UNIQUE INDEX webhook_deliveries_one_redelivery_waiting
  ON webhook_deliveries (redelivery_of) WHERE state = 'pending';

-- A redelivery names a first delivery of the same event to the same endpoint, which has ended,
-- and carries its bytes when they were fixed: it is that event again, nothing else.
CREATE FUNCTION webhook_redelivery_of_its_first() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  first webhook_deliveries%ROWTYPE;
  sent text;
BEGIN
  IF NEW.redelivery_of IS NULL THEN
    RETURN NEW;
  END IF;
  SELECT * INTO first FROM webhook_deliveries WHERE id = NEW.redelivery_of;
  IF first.redelivery_of IS NOT NULL OR first.job_id <> NEW.job_id
     OR first.endpoint_id <> NEW.endpoint_id OR first.event_key <> NEW.event_key
     OR first.event <> NEW.event THEN
    RAISE EXCEPTION 'a redelivery names the first delivery of its own event to its own endpoint'
      USING ERRCODE = 'check_violation';
  END IF;
  IF first.state = 'pending' THEN
    RAISE EXCEPTION 'webhook delivery % is still being sent', first.id
      USING ERRCODE = 'check_violation';
  END IF;
  SELECT coalesce(first.body, b.body) INTO sent FROM webhook_event_bodies b
   WHERE b.job_id = NEW.job_id AND b.event_key = NEW.event_key;
  -- Without bytes of its own it sends the event's, fixed once (as the first delivery does).
  IF NEW.body IS NOT NULL AND NEW.body IS DISTINCT FROM coalesce(first.body, sent) THEN
    RAISE EXCEPTION 'a redelivery sends the bytes its event was first sent with'
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER webhook_redelivery_of_its_first
  BEFORE INSERT ON webhook_deliveries
  FOR EACH ROW EXECUTE FUNCTION webhook_redelivery_of_its_first();

-- The fan-out counters (0024) count what endings wrote, not what was asked again.
CREATE OR REPLACE FUNCTION metric_deltas_of_webhook_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO metric_deltas
      SELECT 'webhook_deliveries', state, count(*) FROM added GROUP BY state;
    INSERT INTO metric_deltas
      SELECT 'webhook_deliveries_written', '', count(*) FROM added
       WHERE redelivery_of IS NULL HAVING count(*) > 0;
    INSERT INTO metric_deltas
      SELECT 'webhook_events_written', '', count(DISTINCT (job_id, event_key)) FROM added
       WHERE redelivery_of IS NULL HAVING count(*) > 0;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO metric_deltas
      SELECT 'webhook_deliveries', state, sum(n) FROM (
        SELECT state, 1 AS n FROM added UNION ALL SELECT state, -1 FROM removed) moved
      GROUP BY state HAVING sum(n) <> 0;
  ELSE
    INSERT INTO metric_deltas
      SELECT 'webhook_deliveries', state, -count(*) FROM removed GROUP BY state;
  END IF;
  RETURN NULL;
END $$;

-- For /metrics: redeliveries asked, by who asked (owner, operator).
CREATE FUNCTION metric_deltas_of_webhook_redeliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO metric_deltas
    SELECT 'webhook_redeliveries', split_part(redelivered_by, ':', 1), count(*) FROM added
     WHERE redelivery_of IS NOT NULL GROUP BY 2;
  RETURN NULL;
END $$;

CREATE TRIGGER webhook_deliveries_count_redeliveries
  AFTER INSERT ON webhook_deliveries REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION metric_deltas_of_webhook_redeliveries();

-- A job's waiting redeliveries are found by their first delivery, and an endpoint's ended
-- deliveries by when they ended (what a redelivery request reads).
CREATE INDEX webhook_deliveries_redelivery_idx ON webhook_deliveries (redelivery_of)
  WHERE redelivery_of IS NOT NULL;
CREATE INDEX webhook_deliveries_endpoint_ended_idx ON webhook_deliveries (endpoint_id, ended_at)
  WHERE ended_at IS NOT NULL;
