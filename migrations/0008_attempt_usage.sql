-- What each provider call cost, recorded when the call ends: the usage the provider reported and
-- its price, for every attempt whose call ended, whether it won, lost the race, broke the
-- contract, failed or answered after it was abandoned. NULL means not reported (tokens) or no
-- known price (cost): unknown, never zero.
ALTER TABLE attempts
  ADD COLUMN call_outcome text
    CHECK (call_outcome IN ('won', 'lost', 'rejected', 'failed')),
  ADD COLUMN input_tokens bigint CHECK (input_tokens >= 0),
  ADD COLUMN cached_input_tokens bigint CHECK (cached_input_tokens >= 0),
  ADD COLUMN output_tokens bigint CHECK (output_tokens >= 0),
  ADD COLUMN cost numeric CHECK (cost >= 0),
  ADD COLUMN cost_currency text CHECK (cost_currency ~ '^[A-Z]{3}$');

ALTER TABLE attempts
  -- Cached input is part of the input.
  ADD CONSTRAINT attempts_cached_within_input
    CHECK (cached_input_tokens <= input_tokens),
  -- An amount means nothing without its currency.
  ADD CONSTRAINT attempts_cost_has_currency
    CHECK ((cost IS NULL) = (cost_currency IS NULL)),
  -- The ledger is written with the call's end, in the same statement, and never before it.
  ADD CONSTRAINT attempts_usage_with_call_end
    CHECK ((call_outcome IS NULL OR call_ended_at IS NOT NULL)
       AND (call_outcome IS NOT NULL OR (input_tokens IS NULL AND cached_input_tokens IS NULL
                                         AND output_tokens IS NULL AND cost IS NULL)));

-- Hedging's budget reads what hedged jobs' calls cost lately (src/db/hedgeSpend.ts), by when
-- each call ended.
CREATE INDEX attempts_call_ends_idx
  ON attempts (call_ended_at)
  WHERE call_outcome IS NOT NULL;

-- Cost and token totals for /metrics, by the same deltas as migration 0005. A cost is counted
-- in billionths of its currency unit: an integer, as the deltas are.
ALTER TABLE metric_deltas ALTER COLUMN delta TYPE bigint;

CREATE FUNCTION metric_deltas_of_call_ends() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  by_outcome text := NEW.provider || '|' || NEW.call_outcome;
BEGIN
  IF NEW.cost IS NOT NULL THEN
    INSERT INTO metric_deltas
      VALUES ('attempt_cost_nanos', by_outcome || '|' || NEW.cost_currency,
              round(NEW.cost * 1e9)::bigint);
  ELSE
    INSERT INTO metric_deltas VALUES ('attempt_calls_unpriced', by_outcome, 1);
  END IF;
  IF NEW.input_tokens IS NOT NULL THEN
    INSERT INTO metric_deltas VALUES ('attempt_tokens', NEW.provider || '|input', NEW.input_tokens);
  END IF;
  IF NEW.cached_input_tokens IS NOT NULL THEN
    INSERT INTO metric_deltas
      VALUES ('attempt_tokens', NEW.provider || '|cached_input', NEW.cached_input_tokens);
  END IF;
  IF NEW.output_tokens IS NOT NULL THEN
    INSERT INTO metric_deltas VALUES ('attempt_tokens', NEW.provider || '|output', NEW.output_tokens);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER attempts_count_call_ends
  AFTER UPDATE OF call_outcome ON attempts
  FOR EACH ROW
  WHEN (OLD.call_outcome IS NULL AND NEW.call_outcome IS NOT NULL)
  EXECUTE FUNCTION metric_deltas_of_call_ends();
