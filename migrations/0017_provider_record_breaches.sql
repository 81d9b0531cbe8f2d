-- Providers with side effects seen answering a 2xx that breaks the contract: filing the work
-- under an id of their own, answering "pending", a body that is not the charge we asked for.
-- Such a provider's "no record under our key" proves nothing, for any attempt: one whose own
-- answer was lost (its worker killed between the answer and its write) may still have charged.
-- Kept by the database, in the transaction that records the answer, whichever path writes it.
CREATE TABLE provider_record_breaches (
  provider   text PRIMARY KEY,
  -- The first attempt whose answer showed it.
  attempt_id text NOT NULL,
  seen_at    timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION attempts_note_record_breach() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO provider_record_breaches (provider, attempt_id)
  VALUES (NEW.provider, NEW.id)
  ON CONFLICT (provider) DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER attempts_note_record_breach
  AFTER UPDATE OF error ON attempts
  FOR EACH ROW
  WHEN (NEW.error ->> 'code' = 'contract_violation_after_effect'
        AND OLD.error ->> 'code' IS DISTINCT FROM 'contract_violation_after_effect')
  EXECUTE FUNCTION attempts_note_record_breach();

-- And no machine may fail an attempt of such a provider on "no record" (never_processed). One
-- with a success answer of its own is refused by attempts_success_answer_is_not_failed_by_machine.
CREATE FUNCTION attempts_no_record_of_breaching_provider() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM provider_record_breaches WHERE provider = NEW.provider) THEN
    RAISE EXCEPTION 'attempt %: provider % has answered success in breach of its contract, so "no record" proves nothing', NEW.id, NEW.provider
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER attempts_no_record_of_breaching_provider
  BEFORE UPDATE OF state ON attempts
  FOR EACH ROW
  WHEN (NEW.state = 'failed' AND NEW.error ->> 'code' = 'never_processed'
        AND NEW.success_answered_at IS NULL)
  EXECUTE FUNCTION attempts_no_record_of_breaching_provider();
