-- Operators' holds on providers (issue 61): a breaker an operator opens by hand, when they know a
-- provider is sick before its failures show it, kept beside the automatic one (0012). While a
-- provider is held, no new attempt of any job goes to it, probes included (src/db/attempts.ts,
-- createAttempt); attempts already made are reconciled as always (reconciliation never looks
-- here). Every hold and release is a kept row with who and why, and a hold exists only as one.

-- Every hold and release, kept as written.
CREATE TABLE provider_hold_changes (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at         timestamptz NOT NULL DEFAULT now(),
  provider   text NOT NULL CHECK (provider ~ '\S' AND char_length(provider) <= 200),
  change     text NOT NULL CHECK (change IN ('held', 'released')),
  changed_by text NOT NULL CHECK (changed_by ~ '\S' AND char_length(changed_by) <= 200),
  reason     text NOT NULL CHECK (reason ~ '\S' AND char_length(reason) <= 1000)
);

CREATE INDEX provider_hold_changes_provider_idx ON provider_hold_changes (provider, id);

-- The holds in force: one per provider, made by the change that says so.
CREATE TABLE provider_holds (
  provider  text PRIMARY KEY,
  change_id bigint NOT NULL UNIQUE REFERENCES provider_hold_changes,
  held_at   timestamptz NOT NULL,
  held_by   text NOT NULL,
  reason    text NOT NULL
);

CREATE FUNCTION provider_hold_changes_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'provider hold change % is kept as written', OLD.id
    USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER provider_hold_changes_kept
  BEFORE UPDATE OR DELETE ON provider_hold_changes
  FOR EACH ROW EXECUTE FUNCTION provider_hold_changes_kept();

-- A change applies itself: a hold of a provider already held, or a release of one that is not,
-- is refused with what holds now (an operator acting on an old view learns it, and nothing is
-- recorded).
CREATE FUNCTION provider_hold_change_applies() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  current provider_holds%ROWTYPE;
BEGIN
  SELECT * INTO current FROM provider_holds WHERE provider = NEW.provider FOR UPDATE;
  IF NEW.change = 'held' THEN
    IF FOUND THEN
      RAISE EXCEPTION 'provider % is already held, by % since %: %', NEW.provider,
        current.held_by, to_char(current.held_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        current.reason USING ERRCODE = 'unique_violation', CONSTRAINT = 'provider_holds_pkey';
    END IF;
    INSERT INTO provider_holds (provider, change_id, held_at, held_by, reason)
    VALUES (NEW.provider, NEW.id, NEW.at, NEW.changed_by, NEW.reason);
  ELSE
    IF NOT FOUND THEN
      RAISE EXCEPTION 'provider % is not held', NEW.provider
        USING ERRCODE = 'no_data_found';
    END IF;
    DELETE FROM provider_holds WHERE provider = NEW.provider;
  END IF;
  INSERT INTO metric_deltas VALUES ('provider_hold_changes', NEW.provider || '|' || NEW.change, 1);
  RETURN NULL;
END
$$;

CREATE TRIGGER provider_hold_changes_apply
  AFTER INSERT ON provider_hold_changes
  FOR EACH ROW EXECUTE FUNCTION provider_hold_change_applies();

-- Holds are written only by their changes: a hold made or lifted otherwise would have no record
-- of who and why.
CREATE FUNCTION provider_holds_by_changes_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() < 2 THEN
    RAISE EXCEPTION 'holds are made and released by inserting into provider_hold_changes, which keeps who and why'
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

CREATE TRIGGER provider_holds_by_changes_only
  BEFORE INSERT OR UPDATE OR DELETE ON provider_holds
  FOR EACH ROW EXECUTE FUNCTION provider_holds_by_changes_only();
