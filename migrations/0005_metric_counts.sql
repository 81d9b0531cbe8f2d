-- All-time counts for /metrics (attempts by state, lost races), kept by PostgreSQL itself so a
-- scrape never counts whole tables.
--
-- Why deltas and not one counter row per state: every job creation inserts an attempt, so a
-- counter row updated in the writer's own transaction would be held locked until that
-- transaction commits, queueing every concurrent creation behind it (and inviting deadlocks
-- with the other rows those transactions lock). Instead the triggers only INSERT a delta row,
-- which no other writer ever waits on. The API folds the deltas into metric_totals at every
-- scrape and once a minute (see src/telemetry/metrics.ts), so metric_deltas holds only what changed
-- since the last fold and metric_totals one row per (metric, label).

CREATE TABLE metric_totals (
  metric text   NOT NULL,
  label  text   NOT NULL,
  n      bigint NOT NULL,
  PRIMARY KEY (metric, label)
);

CREATE TABLE metric_deltas (
  metric text    NOT NULL,
  label  text    NOT NULL,
  delta  integer NOT NULL
);

CREATE FUNCTION metric_deltas_of_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    INSERT INTO metric_deltas VALUES ('attempts', OLD.state, -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO metric_deltas VALUES ('attempts', NEW.state, 1);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER attempts_count_rows
  AFTER INSERT OR DELETE ON attempts
  FOR EACH ROW EXECUTE FUNCTION metric_deltas_of_attempts();

CREATE TRIGGER attempts_count_state_changes
  AFTER UPDATE OF state ON attempts
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
  EXECUTE FUNCTION metric_deltas_of_attempts();

CREATE FUNCTION metric_deltas_of_race_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO metric_deltas VALUES ('race_events', '', CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END);
  RETURN NULL;
END $$;

CREATE TRIGGER race_events_count_rows
  AFTER INSERT OR DELETE ON race_events
  FOR EACH ROW EXECUTE FUNCTION metric_deltas_of_race_events();

-- The rows that exist already, counted once. Creating the triggers above locked both tables
-- against writes until this migration commits, so nothing is counted twice or missed.
INSERT INTO metric_totals (metric, label, n)
  SELECT 'attempts', state, count(*) FROM attempts GROUP BY state;
INSERT INTO metric_totals (metric, label, n)
  SELECT 'race_events', '', count(*) FROM race_events;
