-- Budgets that hold (issue 60): what an owner's calls may cost per day or month, held here,
-- where every attempt is created. An attempt of a budgeted owner reserves its worst case in the
-- statement that creates it; the reservation is settled to the ledger's cost when the call ends,
-- and an attempt whose effect is unknown keeps it, because it may still bill.

CREATE TABLE budgets (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  owner_id   text NOT NULL,
  -- NULL: every job type of the owner.
  job_type   text,
  period     text NOT NULL CHECK (period IN ('day', 'month')),
  currency   text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  amount     numeric NOT NULL CHECK (amount >= 0),
  set_by     text NOT NULL,
  reason     text NOT NULL,
  set_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX budgets_one_per_scope ON budgets (owner_id, coalesce(job_type, ''), period);

-- Every change an operator made to a budget: who, when, why, and what it was before.
CREATE TABLE budget_changes (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  owner_id   text NOT NULL,
  job_type   text,
  period     text NOT NULL,
  -- NULL: the budget was set anew, or removed.
  before     jsonb,
  after      jsonb,
  changed_by text NOT NULL,
  reason     text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX budget_changes_by_owner ON budget_changes (owner_id, changed_at);

-- One budget's period (a UTC day or month): what is reserved and what is spent in it. The row
-- the gate locks, so concurrent attempts of one owner take their places one after another.
CREATE TABLE budget_periods (
  budget_id    bigint NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
  period_start timestamptz NOT NULL,
  reserved     numeric NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  spent        numeric NOT NULL DEFAULT 0 CHECK (spent >= 0),
  PRIMARY KEY (budget_id, period_start)
);

-- The worst case an attempt may cost, in the currency of its provider's prices: the input as
-- counted for the provider times its dearest input price, plus the output cap times the output
-- price; for a payment API, its configured worst fee. Written when the attempt is created, only
-- for an owner with a budget (the gate asks for it).
ALTER TABLE attempts
  ADD COLUMN worst_case numeric CHECK (worst_case >= 0),
  ADD COLUMN worst_case_currency text CHECK (worst_case_currency ~ '^[A-Z]{3}$'),
  ADD CONSTRAINT attempts_worst_case_has_currency
    CHECK ((worst_case IS NULL) = (worst_case_currency IS NULL));

-- One attempt's place in one budget's period: its worst case while it may still bill, then what
-- it cost (settled_cost).
CREATE TABLE budget_reservations (
  attempt_id   text NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
  budget_id    bigint NOT NULL,
  period_start timestamptz NOT NULL,
  worst_case   numeric NOT NULL CHECK (worst_case >= 0),
  reserved_at  timestamptz NOT NULL DEFAULT now(),
  -- NULL while the reservation holds; what it counts for once settled.
  settled_cost numeric CHECK (settled_cost >= 0),
  settled_at   timestamptz,
  PRIMARY KEY (attempt_id, budget_id),
  FOREIGN KEY (budget_id, period_start) REFERENCES budget_periods ON DELETE CASCADE,
  CHECK ((settled_cost IS NULL) = (settled_at IS NULL))
);
CREATE INDEX budget_reservations_by_period ON budget_reservations (budget_id, period_start);

-- The start of the period `period` that `at` falls in, by the UTC calendar.
CREATE FUNCTION budget_period_start(period text, at timestamptz) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE AS $$
    SELECT date_trunc(period, at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
  $$;

-- Price ceilings: per owner and job type (NULL: every owner, every type), the most one job may
-- cost (what its attempts reserve or cost, together) and the most a fallback or hedge may cost
-- as a multiple of the job's primary. Every ceiling that applies holds: the strictest wins.
CREATE TABLE price_ceilings (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  owner_id       text,
  job_type       text,
  currency       text CHECK (currency ~ '^[A-Z]{3}$'),
  max_job_cost   numeric CHECK (max_job_cost >= 0),
  max_multiple   numeric CHECK (max_multiple >= 1),
  set_by         text NOT NULL,
  reason         text NOT NULL,
  set_at         timestamptz NOT NULL DEFAULT now(),
  CHECK ((max_job_cost IS NULL) = (currency IS NULL)),
  CHECK (max_job_cost IS NOT NULL OR max_multiple IS NOT NULL)
);
CREATE UNIQUE INDEX price_ceilings_one_per_scope
  ON price_ceilings (coalesce(owner_id, ''), coalesce(job_type, ''));

-- What an attempt counts for in its job's total: its cost once known, nothing if it ended without
-- its request leaving, else its worst case (it may have billed, or still may).
CREATE FUNCTION attempt_counted_cost(a attempts) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN a.call_outcome IS NOT NULL AND a.cost IS NOT NULL AND a.cost_currency = a.worst_case_currency
      THEN a.cost
    WHEN a.finished_at IS NOT NULL AND a.started_at IS NULL THEN 0
    ELSE a.worst_case
  END
$$;

-- The gate. For each budget over the attempt's owner and job type (in the budgets' order, so two
-- gates never wait on each other's rows crosswise): no worst case, or one in another currency,
-- is no call (fail closed); a worst case that does not fit under what is left is no call.
CREATE FUNCTION attempts_reserve_within_budgets() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  job record;
  b record;
  c record;
  counted numeric;
  start timestamptz;
BEGIN
  SELECT owner_id, job_type INTO job FROM jobs WHERE id = NEW.job_id;
  -- The job's ceiling: what its attempts count for together, this one's worst case included.
  -- The job's own attempts are created one after another under this lock, hedges included.
  FOR c IN SELECT * FROM price_ceilings
            WHERE max_job_cost IS NOT NULL
              AND (owner_id IS NULL OR owner_id = job.owner_id)
              AND (job_type IS NULL OR job_type = job.job_type)
            ORDER BY id
  LOOP
    IF NEW.worst_case IS NULL OR NEW.worst_case_currency <> c.currency THEN
      RAISE EXCEPTION 'attempt % needs a worst case in % to be held to its job''s ceiling',
          NEW.id, c.currency
        USING ERRCODE = 'check_violation', CONSTRAINT = 'attempts_budget_needs_worst_case',
              DETAIL = json_build_object('ceilingId', c.id, 'currency', c.currency,
                                         'worstCaseCurrency', NEW.worst_case_currency)::text;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('job-ceiling:' || NEW.job_id::text));
    SELECT coalesce(sum(attempt_counted_cost(a)), 0) INTO counted
      FROM attempts a WHERE a.job_id = NEW.job_id AND a.id <> NEW.id;
    IF counted + NEW.worst_case > c.max_job_cost THEN
      RAISE EXCEPTION 'attempt % would take job % past its ceiling', NEW.id, NEW.job_id
        USING ERRCODE = 'check_violation', CONSTRAINT = 'attempts_within_job_ceiling',
              DETAIL = json_build_object('ceilingId', c.id, 'currency', c.currency,
                                         'maxJobCost', c.max_job_cost, 'counted', counted,
                                         'worstCase', NEW.worst_case)::text;
    END IF;
  END LOOP;
  FOR b IN SELECT * FROM budgets
            WHERE owner_id = job.owner_id AND (job_type IS NULL OR job_type = job.job_type)
            ORDER BY id
  LOOP
    IF NEW.worst_case IS NULL OR NEW.worst_case_currency <> b.currency THEN
      RAISE EXCEPTION 'attempt % needs a worst case in % to be counted against budget %',
          NEW.id, b.currency, b.id
        USING ERRCODE = 'check_violation', CONSTRAINT = 'attempts_budget_needs_worst_case',
              DETAIL = json_build_object('budgetId', b.id, 'currency', b.currency,
                                         'worstCaseCurrency', NEW.worst_case_currency)::text;
    END IF;
    start := budget_period_start(b.period, now());
    INSERT INTO budget_periods (budget_id, period_start) VALUES (b.id, start)
      ON CONFLICT DO NOTHING;
    UPDATE budget_periods SET reserved = reserved + NEW.worst_case
     WHERE budget_id = b.id AND period_start = start
       AND reserved + spent + NEW.worst_case <= b.amount;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'attempt % does not fit in budget %', NEW.id, b.id
        USING ERRCODE = 'check_violation', CONSTRAINT = 'attempts_within_budget',
              DETAIL = (SELECT json_build_object(
                          'budgetId', b.id, 'jobType', b.job_type, 'period', b.period,
                          'periodStart', start, 'currency', b.currency, 'amount', b.amount,
                          'reserved', p.reserved, 'spent', p.spent,
                          'worstCase', NEW.worst_case)::text
                          FROM budget_periods p WHERE p.budget_id = b.id AND p.period_start = start);
    END IF;
    INSERT INTO budget_reservations (attempt_id, budget_id, period_start, worst_case)
      VALUES (NEW.id, b.id, start, NEW.worst_case);
  END LOOP;
  RETURN NULL;
END $$;

-- AFTER INSERT: fired only for a row really inserted, not for the ON CONFLICT of a re-create.
CREATE TRIGGER attempts_reserve_within_budgets
  AFTER INSERT ON attempts
  FOR EACH ROW EXECUTE FUNCTION attempts_reserve_within_budgets();

-- What an attempt's reservation counts for now: NULL while it holds (no cost known and the
-- attempt not ended: the call may still bill), else what the attempt counts for
-- (attempt_counted_cost; the gate took its worst case in the budget's currency).
CREATE FUNCTION budget_reservation_settles_at(a attempts) RETURNS numeric
  LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
      WHEN (a.call_outcome IS NOT NULL AND a.cost IS NOT NULL) OR a.finished_at IS NOT NULL
        THEN attempt_counted_cost(a)
    END
  $$;

-- Settles (or re-settles, when a late call's cost lands after its attempt ended) each of the
-- attempt's reservations, moving the difference between reserved and spent in its period.
CREATE FUNCTION attempts_settle_reservations() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
  settled numeric;
BEGIN
  FOR r IN SELECT * FROM budget_reservations WHERE attempt_id = NEW.id ORDER BY budget_id
  LOOP
    settled := budget_reservation_settles_at(NEW);
    CONTINUE WHEN settled IS NULL OR settled = r.settled_cost;
    UPDATE budget_periods
       SET reserved = reserved - CASE WHEN r.settled_cost IS NULL THEN r.worst_case ELSE 0 END,
           spent = spent + settled - coalesce(r.settled_cost, 0)
     WHERE budget_id = r.budget_id AND period_start = r.period_start;
    UPDATE budget_reservations SET settled_cost = settled, settled_at = now()
     WHERE attempt_id = r.attempt_id AND budget_id = r.budget_id;
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER attempts_settle_reservations
  AFTER UPDATE OF state, finished_at, call_outcome, cost, cost_currency ON attempts
  FOR EACH ROW WHEN (NEW.worst_case IS NOT NULL)
  EXECUTE FUNCTION attempts_settle_reservations();
