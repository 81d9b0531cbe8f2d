-- Webhook metrics for /metrics (issue 55, N11), kept as migration 0005 keeps the attempt counts:
-- triggers append deltas that the API folds at each scrape, so no scrape counts a delivery or
-- try table. These triggers fire once per statement, not per row: an ending that writes one
-- delivery per endpoint appends one delta row per state, not one per endpoint.

-- Deliveries by state, now (pending is the backlog): a state counts up as a row enters it and
-- down as it leaves, by update, or by delete (a job's removal cascades to its deliveries).
CREATE FUNCTION metric_deltas_of_webhook_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO metric_deltas
      SELECT 'webhook_deliveries', state, count(*) FROM added GROUP BY state;
    -- Fan-out: the deliveries written, and the events they were written for.
    INSERT INTO metric_deltas
      SELECT 'webhook_deliveries_written', '', count(*) FROM added HAVING count(*) > 0;
    INSERT INTO metric_deltas
      SELECT 'webhook_events_written', '', count(DISTINCT (job_id, event_key)) FROM added
      HAVING count(*) > 0;
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

CREATE TRIGGER webhook_deliveries_count_inserts
  AFTER INSERT ON webhook_deliveries REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION metric_deltas_of_webhook_deliveries();
CREATE TRIGGER webhook_deliveries_count_updates
  AFTER UPDATE ON webhook_deliveries REFERENCING OLD TABLE AS removed NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION metric_deltas_of_webhook_deliveries();
CREATE TRIGGER webhook_deliveries_count_deletes
  AFTER DELETE ON webhook_deliveries REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION metric_deltas_of_webhook_deliveries();

-- What a try came to, as operators read it: 2xx delivered, 410 gone, no status no answer (a
-- timeout, a refused connection, a name that did not resolve), any other status refused.
CREATE FUNCTION webhook_try_outcome(status integer) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN status IS NULL THEN 'no_answer'
              WHEN status BETWEEN 200 AND 299 THEN 'delivered'
              WHEN status = 410 THEN 'gone'
              ELSE 'refused' END
$$;

-- Tries by outcome, all time: counted as they are written, never down (a try removed with its
-- job was still made).
CREATE FUNCTION metric_deltas_of_webhook_tries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO metric_deltas
    SELECT 'webhook_tries', webhook_try_outcome(status), count(*) FROM added
     GROUP BY webhook_try_outcome(status);
  RETURN NULL;
END $$;

CREATE TRIGGER webhook_delivery_tries_count_inserts
  AFTER INSERT ON webhook_delivery_tries REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION metric_deltas_of_webhook_tries();

-- The endpoints a breaker holds now: a scrape reads only the holds still in the future.
CREATE INDEX webhook_endpoint_health_held_idx
  ON webhook_endpoint_health (held_until) WHERE held_until IS NOT NULL;

-- What exists already, counted once. Creating the triggers above locked both tables against
-- writes until this migration commits, so nothing is counted twice or missed.
INSERT INTO metric_totals (metric, label, n)
  SELECT 'webhook_deliveries', state, count(*) FROM webhook_deliveries GROUP BY state;
INSERT INTO metric_totals (metric, label, n)
  SELECT 'webhook_deliveries_written', '', count(*) FROM webhook_deliveries;
INSERT INTO metric_totals (metric, label, n)
  SELECT 'webhook_events_written', '', count(DISTINCT (job_id, event_key)) FROM webhook_deliveries;
INSERT INTO metric_totals (metric, label, n)
  SELECT 'webhook_tries', webhook_try_outcome(status), count(*) FROM webhook_delivery_tries
   GROUP BY webhook_try_outcome(status);
