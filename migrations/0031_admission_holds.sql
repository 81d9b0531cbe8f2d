-- Admission holds (issue 61): during an incident an operator may stop new jobs (of one type, or
-- all) from being admitted. Their intents are still accepted and recorded, each job says it is
-- held, and replays answer as always; admission (src/activities/admission.ts) waits until the
-- hold is released. Jobs admitted before the hold run on. Every hold and release is a kept row
-- with who and why, and a hold exists only as one, as for providers (0028).

CREATE TABLE admission_hold_changes (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at         timestamptz NOT NULL DEFAULT now(),
  -- NULL: every job type.
  job_type   text CHECK (job_type ~ '\S' AND char_length(job_type) <= 100),
  change     text NOT NULL CHECK (change IN ('held', 'released')),
  changed_by text NOT NULL CHECK (changed_by ~ '\S' AND char_length(changed_by) <= 200),
  reason     text NOT NULL CHECK (reason ~ '\S' AND char_length(reason) <= 1000)
);

CREATE TABLE admission_holds (
  job_type  text,
  change_id bigint NOT NULL UNIQUE REFERENCES admission_hold_changes,
  held_at   timestamptz NOT NULL,
  held_by   text NOT NULL,
  reason    text NOT NULL
);
CREATE UNIQUE INDEX admission_holds_one_per_scope ON admission_holds (coalesce(job_type, ''));

-- The two rules of 0028, written once for both kinds of hold: a change is kept as written, and
-- only its change writes a hold (the trigger names the table of changes).
CREATE OR REPLACE FUNCTION provider_hold_changes_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% row % is kept as written', TG_TABLE_NAME, OLD.id
    USING ERRCODE = 'check_violation';
END
$$;

CREATE OR REPLACE FUNCTION provider_holds_by_changes_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() < 2 THEN
    RAISE EXCEPTION 'holds are made and released by inserting into %, which keeps who and why',
      coalesce(TG_ARGV[0], 'provider_hold_changes') USING ERRCODE = 'check_violation';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

CREATE TRIGGER admission_hold_changes_kept
  BEFORE UPDATE OR DELETE ON admission_hold_changes
  FOR EACH ROW EXECUTE FUNCTION provider_hold_changes_kept();

CREATE FUNCTION admission_hold_change_applies() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  current admission_holds%ROWTYPE;
  scope text := coalesce(NEW.job_type, 'every job type');
BEGIN
  SELECT * INTO current FROM admission_holds
   WHERE coalesce(job_type, '') = coalesce(NEW.job_type, '') FOR UPDATE;
  IF NEW.change = 'held' THEN
    IF FOUND THEN
      RAISE EXCEPTION 'admission of % is already held, by % since %: %', scope, current.held_by,
        to_char(current.held_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), current.reason
        USING ERRCODE = 'unique_violation', CONSTRAINT = 'admission_holds_one_per_scope';
    END IF;
    INSERT INTO admission_holds (job_type, change_id, held_at, held_by, reason)
    VALUES (NEW.job_type, NEW.id, NEW.at, NEW.changed_by, NEW.reason);
  ELSE
    IF NOT FOUND THEN
      RAISE EXCEPTION 'admission of % is not held', scope USING ERRCODE = 'no_data_found';
    END IF;
    DELETE FROM admission_holds WHERE coalesce(job_type, '') = coalesce(NEW.job_type, '');
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER admission_hold_changes_apply
  AFTER INSERT ON admission_hold_changes
  FOR EACH ROW EXECUTE FUNCTION admission_hold_change_applies();

CREATE TRIGGER admission_holds_by_changes_only
  BEFORE INSERT OR UPDATE OR DELETE ON admission_holds
  FOR EACH ROW EXECUTE FUNCTION provider_holds_by_changes_only('admission_hold_changes');
