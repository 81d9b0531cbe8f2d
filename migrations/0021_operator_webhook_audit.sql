-- Issue 55, N10. An endpoint outlives the token that registered it, so operators may disable,
-- enable and delete any owner's endpoint (docs/operators.md), and every such action is kept:
-- who, what, which endpoint of which owner, why and when.

-- An operator's disable holds until an operator lifts it: the owner's own enable (for an
-- endpoint a 410 turned off) cannot undo it.
ALTER TABLE webhook_endpoints
  ADD COLUMN disabled_by_operator boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT webhook_endpoints_operator_disable_disables
    CHECK (NOT disabled_by_operator OR disabled_at IS NOT NULL),
  -- What an action record names as (endpoint, owner) is a pair that exists.
  ADD CONSTRAINT webhook_endpoints_id_owner_key UNIQUE (id, owner_id);

CREATE TABLE webhook_operator_actions (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at          timestamptz NOT NULL DEFAULT now(),
  -- The operator's name: from ONEJOB_OPERATOR_TOKENS over HTTP, --operator or $USER on the CLI.
  operator    text NOT NULL CHECK (char_length(operator) BETWEEN 1 AND 200
                                   AND operator !~ '[[:cntrl:]]'),
  action      text NOT NULL CHECK (action IN ('disable', 'enable', 'delete')),
  endpoint_id uuid NOT NULL,
  owner_id    text NOT NULL,
  reason      text NOT NULL CHECK (reason ~ '\S' AND char_length(reason) <= 2000),
  -- Endpoints are never removed (a delete marks them), so a record always names a real one.
  FOREIGN KEY (endpoint_id, owner_id) REFERENCES webhook_endpoints (id, owner_id)
);

CREATE INDEX webhook_operator_actions_endpoint_idx ON webhook_operator_actions (endpoint_id, id);
CREATE INDEX webhook_operator_actions_owner_idx ON webhook_operator_actions (owner_id, id);

-- The trail is kept as written: a record is neither changed nor taken back.
CREATE FUNCTION webhook_operator_actions_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'operator action % on a webhook endpoint is kept as written', OLD.id
    USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER webhook_operator_actions_kept
  BEFORE UPDATE OR DELETE ON webhook_operator_actions
  FOR EACH ROW EXECUTE FUNCTION webhook_operator_actions_kept();
