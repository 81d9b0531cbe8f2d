-- Continuous certification (issue 60, section 3). A provider certified for a job type's contract
-- that then breaks too many of its answers (the ledger's 'rejected' calls: schema, business
-- checks, refusals, truncation) loses its place as a fallback and a hedge for that contract,
-- until `onejob providers certify` passes again. The worker decides the loss when a rejected
-- call ends (src/activities/eligibilityCheck.ts); this schema holds what it decided, keeps every
-- change, and refuses what would make the record lie.

-- One row per certification that lost its fallback and hedge eligibility: which certification
-- (its key and its certified_at), who or what decided, and the evidence: the window of calls.
CREATE TABLE provider_decertifications (
  provider         text NOT NULL,
  model            text NOT NULL,
  job_type         text NOT NULL,
  contract_version text NOT NULL,
  -- The passing certification this overrides; a newer run of `providers certify` replaces it.
  certified_at     timestamptz NOT NULL,
  decertified_at   timestamptz NOT NULL DEFAULT now(),
  decided_by       text NOT NULL CHECK (decided_by ~ '\S' AND char_length(decided_by) <= 200),
  -- The rejected call whose end tipped the rate (none when decided otherwise).
  attempt_id       text,
  -- The window: calls that answered (won, lost, rejected) since the certification, newest first.
  calls            integer NOT NULL CHECK (calls > 0),
  rejected         integer NOT NULL CHECK (rejected > 0 AND rejected <= calls),
  rate             double precision GENERATED ALWAYS AS (rejected::double precision / calls) STORED,
  -- The rate's Wilson lower bound at `confidence`: what passed `threshold`.
  lower_bound      double precision NOT NULL,
  threshold        double precision NOT NULL CHECK (threshold >= 0 AND threshold < 1),
  confidence       double precision NOT NULL CHECK (confidence > 0.5 AND confidence < 1),
  window_calls     integer NOT NULL CHECK (window_calls >= calls),
  window_ms        bigint NOT NULL CHECK (window_ms > 0),
  PRIMARY KEY (provider, model, job_type, contract_version),
  FOREIGN KEY (provider, model, job_type, contract_version)
    REFERENCES certifications ON DELETE CASCADE,
  -- A loss is only what the rule says: a lower bound above the threshold, and never above the
  -- rate it bounds.
  CHECK (lower_bound > threshold AND lower_bound <= rejected::double precision / calls)
);

-- Every change of eligibility, kept as written: lost (by the rate, with its evidence) and
-- regained (by a passing certification).
CREATE TABLE provider_eligibility_changes (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at               timestamptz NOT NULL DEFAULT now(),
  provider         text NOT NULL,
  model            text NOT NULL,
  job_type         text NOT NULL,
  contract_version text NOT NULL,
  change           text NOT NULL CHECK (change IN ('lost', 'regained')),
  changed_by       text NOT NULL CHECK (changed_by ~ '\S'),
  detail           jsonb NOT NULL CHECK (jsonb_typeof(detail) = 'object')
);

CREATE INDEX provider_eligibility_changes_provider_idx
  ON provider_eligibility_changes (provider, job_type, id);

CREATE FUNCTION provider_eligibility_changes_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'eligibility change % is kept as written', OLD.id
    USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER provider_eligibility_changes_kept
  BEFORE UPDATE OR DELETE ON provider_eligibility_changes
  FOR EACH ROW EXECUTE FUNCTION provider_eligibility_changes_kept();

-- A loss is only of the certification in force, and only while it passes: the worker read its
-- window against one certification, and a newer run of `providers certify` may have landed
-- meanwhile. The certification's row is locked (FOR SHARE) so that a run saving now waits, or
-- is waited for and then seen: a loss decided against an older certification is dropped.
CREATE FUNCTION provider_decertification_of_certification_in_force() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  in_force certifications%ROWTYPE;
BEGIN
  SELECT * INTO in_force FROM certifications c
   WHERE c.provider = NEW.provider AND c.model = NEW.model AND c.job_type = NEW.job_type
     AND c.contract_version = NEW.contract_version
   FOR SHARE;
  IF NOT FOUND OR NOT in_force.passed OR in_force.certified_at <> NEW.certified_at THEN
    RETURN NULL;
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER provider_decertifications_in_force
  BEFORE INSERT ON provider_decertifications
  FOR EACH ROW EXECUTE FUNCTION provider_decertification_of_certification_in_force();

-- Decertifications are not edited: a new loss is a new row after a regain.
CREATE FUNCTION provider_decertifications_unchanged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a decertification of % for % is not edited', OLD.provider, OLD.job_type
    USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER provider_decertifications_unchanged
  BEFORE UPDATE ON provider_decertifications
  FOR EACH ROW EXECUTE FUNCTION provider_decertifications_unchanged();

-- Eligibility comes back only with a passing certification newer than the one that was lost
-- (or with the certification itself gone, by cascade: nothing is certified then).
CREATE FUNCTION provider_decertification_ends() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  now_in_force certifications%ROWTYPE;
BEGIN
  SELECT * INTO now_in_force FROM certifications c
   WHERE c.provider = OLD.provider AND c.model = OLD.model AND c.job_type = OLD.job_type
     AND c.contract_version = OLD.contract_version;
  IF FOUND AND NOT (now_in_force.passed AND now_in_force.certified_at <> OLD.certified_at) THEN
    RAISE EXCEPTION 'provider % regains eligibility for % only by a passing certification',
      OLD.provider, OLD.job_type USING ERRCODE = 'check_violation';
  END IF;
  INSERT INTO provider_eligibility_changes
    (provider, model, job_type, contract_version, change, changed_by, detail)
  VALUES (OLD.provider, OLD.model, OLD.job_type, OLD.contract_version, 'regained',
          CASE WHEN FOUND THEN 'a passing certification (onejob providers certify)'
               ELSE 'its certification was removed' END,
          jsonb_build_object('decertifiedAt', OLD.decertified_at,
                             'certifiedAt', now_in_force.certified_at));
  RETURN OLD;
END
$$;

CREATE TRIGGER provider_decertifications_end
  BEFORE DELETE ON provider_decertifications
  FOR EACH ROW EXECUTE FUNCTION provider_decertification_ends();

CREATE FUNCTION provider_decertification_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO provider_eligibility_changes
    (provider, model, job_type, contract_version, change, changed_by, detail)
  VALUES (NEW.provider, NEW.model, NEW.job_type, NEW.contract_version, 'lost', NEW.decided_by,
          jsonb_build_object('attemptId', NEW.attempt_id, 'calls', NEW.calls,
                             'rejected', NEW.rejected, 'rate', NEW.rate,
                             'lowerBound', NEW.lower_bound, 'threshold', NEW.threshold,
                             'confidence', NEW.confidence, 'windowCalls', NEW.window_calls,
                             'windowMs', NEW.window_ms, 'certifiedAt', NEW.certified_at));
  RETURN NULL;
END
$$;

CREATE TRIGGER provider_decertifications_recorded
  AFTER INSERT ON provider_decertifications
  FOR EACH ROW EXECUTE FUNCTION provider_decertification_recorded();

-- A passing run of `onejob providers certify` ends the loss of the certification it replaces.
CREATE FUNCTION certification_restores_eligibility() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM provider_decertifications d
   WHERE d.provider = NEW.provider AND d.model = NEW.model AND d.job_type = NEW.job_type
     AND d.contract_version = NEW.contract_version;
  RETURN NULL;
END
$$;

CREATE TRIGGER certifications_restore_eligibility
  AFTER INSERT OR UPDATE ON certifications
  FOR EACH ROW WHEN (NEW.passed)
  EXECUTE FUNCTION certification_restores_eligibility();

-- For /metrics: changes by provider and kind (onejob_provider_eligibility_changes_total), kept
-- as migration 0005 keeps its counts.
CREATE FUNCTION metric_deltas_of_eligibility_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO metric_deltas VALUES ('provider_eligibility_changes', NEW.provider || '|' || NEW.change, 1);
  RETURN NULL;
END $$;

CREATE TRIGGER provider_eligibility_changes_counted
  AFTER INSERT ON provider_eligibility_changes
  FOR EACH ROW EXECUTE FUNCTION metric_deltas_of_eligibility_changes();

-- The check reads a provider's latest answered calls: the index of 0012 on (provider,
-- call_ended_at) serves it.
