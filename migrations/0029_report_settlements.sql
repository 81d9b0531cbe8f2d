-- Settling unknown attempts from a provider's own report (issue 61): an operator reads the
-- provider's export, sees the plan (dry run), and applies it. Each applied run is one kept
-- record: who, why, which provider, which bytes (their SHA-256), what the plan counted, and for
-- every attempt it settled what the validated resolve path answered. A dry run writes nothing.

CREATE TABLE report_settlements (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at            timestamptz NOT NULL DEFAULT now(),
  provider      text NOT NULL CHECK (provider ~ '\S' AND char_length(provider) <= 200),
  operator      text NOT NULL CHECK (operator ~ '\S' AND char_length(operator) <= 200),
  reason        text NOT NULL CHECK (reason ~ '\S' AND char_length(reason) <= 1000),
  -- Where the report came from: its file name, or what a tool named it.
  source        text NOT NULL CHECK (char_length(source) <= 1000),
  source_sha256 text NOT NULL CHECK (source_sha256 ~ '^[0-9a-f]{64}$'),
  -- The plan's counts by verdict (to settle, already, contradicting, not found, …).
  counts        jsonb NOT NULL CHECK (jsonb_typeof(counts) = 'object')
);

CREATE TABLE report_settlement_rows (
  settlement_id bigint NOT NULL REFERENCES report_settlements,
  -- The report's line that said it.
  line          integer NOT NULL CHECK (line > 0),
  attempt_id    text NOT NULL,
  outcome       text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
  -- What the resolve path answered: settled, held (a failure waits until the call can no longer
  -- land), or refused (the workflow's rules said no; nothing was changed).
  result        text NOT NULL CHECK (result IN ('settled', 'held', 'refused')),
  detail        text NOT NULL,
  at            timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (settlement_id, line)
);

CREATE INDEX report_settlement_rows_attempt_idx ON report_settlement_rows (attempt_id);

CREATE FUNCTION report_settlements_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'report settlements are kept as written (%)', TG_TABLE_NAME
    USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER report_settlements_kept
  BEFORE UPDATE OR DELETE ON report_settlements
  FOR EACH ROW EXECUTE FUNCTION report_settlements_kept();

CREATE TRIGGER report_settlement_rows_kept
  BEFORE UPDATE OR DELETE ON report_settlement_rows
  FOR EACH ROW EXECUTE FUNCTION report_settlements_kept();
