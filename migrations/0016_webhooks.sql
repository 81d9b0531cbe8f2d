-- Completion webhooks (issue 37, docs/http-api.md "Webhooks"). An owner registers endpoints;
-- each event of a job becomes one delivery per endpoint that takes it, and each try at it is
-- recorded. A job's ending events are written by the database in the transaction that ends the
-- row, so an event can never be sent for a job whose row has not ended, and no path that ends a
-- job can forget them.

CREATE TABLE webhook_endpoints (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id        text NOT NULL CHECK (owner_id ~ '^[\x20-\x7e]{1,64}$'),
  url             text NOT NULL CHECK (url ~ '^https?://[^\s]+$' AND length(url) <= 2000),
  events          text[] NOT NULL CHECK (
                    cardinality(events) >= 1
                    AND events <@ ARRAY['job.succeeded', 'job.failed', 'job.cancelled', 'job.needs_operator']
                  ),
  description     text CHECK (length(description) <= 500),
  -- Set when the receiver answered 410 Gone (or the owner disabled it); nothing is sent then.
  disabled_at     timestamptz,
  disabled_reason text,
  -- Deleted endpoints stay, so that the deliveries recorded on jobs keep naming them.
  deleted_at      timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL))
);

CREATE INDEX webhook_endpoints_owner_live_idx
  ON webhook_endpoints (owner_id) WHERE deleted_at IS NULL;

-- An endpoint's signing secrets: the current one (no expiry) and, during a rotation, the ones
-- it replaced until they expire. Every delivery is signed with each secret still live.
CREATE TABLE webhook_secrets (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  secret      text NOT NULL CHECK (secret ~ '^whsec_[A-Za-z0-9+/]{32,}={0,2}$'),
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz
);

CREATE UNIQUE INDEX webhook_secrets_one_current
  ON webhook_secrets (endpoint_id) WHERE expires_at IS NULL;

CREATE TABLE webhook_deliveries (
  -- Sent as `webhook-id`: the same on every try, so receivers can drop what they have seen.
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- The order events are sent in, per job and endpoint.
  position     bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  job_id       uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  endpoint_id  uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event        text NOT NULL
               CHECK (event IN ('job.succeeded', 'job.failed', 'job.cancelled', 'job.needs_operator')),
  -- One delivery of an event per job and endpoint: the ending, or an attempt needing an operator.
  event_key    text NOT NULL,
  state        text NOT NULL DEFAULT 'pending'
               CHECK (state IN ('pending', 'delivered', 'failed', 'abandoned')),
  -- The body, fixed at the first try so that every try sends (and signs) the same bytes: text,
  -- since jsonb would give them back in another key order.
  body         text,
  tries        integer NOT NULL DEFAULT 0 CHECK (tries >= 0),
  -- A sender holds a delivery while it tries it, so two never send it at once.
  claimed_until timestamptz,
  last_status  integer,
  last_error   text,
  last_try_at  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  ended_at     timestamptz,
  UNIQUE (job_id, endpoint_id, event_key),
  CHECK ((state = 'pending') = (ended_at IS NULL)),
  CHECK (state <> 'delivered' OR body IS NOT NULL)
);

CREATE INDEX webhook_deliveries_job_idx ON webhook_deliveries (job_id, position);
CREATE INDEX webhook_deliveries_pending_idx
  ON webhook_deliveries (created_at) WHERE state = 'pending';

-- Each try and the receiver's answer (or why there was none).
CREATE TABLE webhook_delivery_tries (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  n           integer NOT NULL CHECK (n >= 1),
  at          timestamptz NOT NULL DEFAULT now(),
  status      integer,
  error       text,
  duration_ms integer NOT NULL CHECK (duration_ms >= 0),
  PRIMARY KEY (delivery_id, n)
);

-- A delivered or abandoned delivery stays as it ended.
CREATE FUNCTION webhook_deliveries_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.state <> 'pending' AND NEW.state <> OLD.state THEN
    RAISE EXCEPTION 'webhook delivery % is % and stays so', OLD.id, OLD.state
      USING ERRCODE = 'check_violation';
  END IF;
  IF OLD.body IS NOT NULL AND NEW.body IS DISTINCT FROM OLD.body THEN
    RAISE EXCEPTION 'webhook delivery % has its body already', OLD.id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER webhook_deliveries_final
  BEFORE UPDATE ON webhook_deliveries
  FOR EACH ROW EXECUTE FUNCTION webhook_deliveries_final();

-- The ending events, written with the ending itself.
CREATE FUNCTION webhook_job_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ending text := 'job.' || NEW.terminal_status;
BEGIN
  INSERT INTO webhook_deliveries (job_id, endpoint_id, event, event_key)
  SELECT NEW.id, e.id, ending, ending
    FROM webhook_endpoints e
   WHERE e.owner_id = NEW.owner_id
     AND e.deleted_at IS NULL
     AND e.disabled_at IS NULL
     AND ending = ANY (e.events)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER jobs_webhook_ended
  AFTER UPDATE OF terminal_status ON jobs
  FOR EACH ROW
  WHEN (OLD.terminal_status IS NULL AND NEW.terminal_status IS NOT NULL)
  EXECUTE FUNCTION webhook_job_ended();
