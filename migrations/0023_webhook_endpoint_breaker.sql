-- Webhook sends that a dead receiver cannot hold up (issue 55, N2 and item 12).

-- A breaker per endpoint, apart from the endpoint's row so that the claims and tries that update
-- it never wait on an owner's or operator's edit of the endpoint. `failures` counts the tries in a
-- row that were not answered 2xx; from a threshold on (a setting), or when the receiver asks for
-- time (429, 502, 503, 504 with a Retry-After), nothing is sent to the endpoint until
-- `held_until`; once that has passed one probe may go (its claim moves `held_until` on by its
-- lease, so two senders cannot both probe), and a 2xx closes the breaker.
CREATE TABLE webhook_endpoint_health (
  endpoint_id uuid PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  failures    integer NOT NULL CHECK (failures >= 0),
  held_until  timestamptz,
  -- Why it is held, as owners and operators read it (the receiver's status, or no answer).
  held_reason text CHECK (length(held_reason) <= 300),
  CHECK ((held_until IS NULL) = (held_reason IS NULL))
);

-- A claim names its holder: a sender whose lease ran out (another has the delivery now) records
-- its try, but does not free the other's claim.
ALTER TABLE webhook_deliveries ADD COLUMN claim_token uuid;
ALTER TABLE webhook_deliveries
  ADD CONSTRAINT webhook_deliveries_claim_held CHECK ((claim_token IS NULL) = (claimed_until IS NULL));
