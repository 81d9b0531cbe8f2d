-- onejob's schema with every migration applied: pg_dump --schema-only --no-owner
-- --no-privileges, without the lines that name the dump's versions or its session key.
-- Written by `npm run schema:dump`; test/schemaSnapshot.test.ts keeps it true.
--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: admission_hold_change_applies(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.admission_hold_change_applies() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.attempts (
    id text NOT NULL,
    job_id uuid NOT NULL,
    seq integer NOT NULL,
    provider text NOT NULL,
    state text DEFAULT 'starting'::text NOT NULL,
    exclusive boolean NOT NULL,
    read_version bigint NOT NULL,
    error jsonb,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    raw_output jsonb,
    call_ended_at timestamp with time zone,
    first_not_found_at timestamp with time zone,
    call_outcome text,
    input_tokens bigint,
    cached_input_tokens bigint,
    output_tokens bigint,
    cost numeric,
    cost_currency text,
    success_answered_at timestamp with time zone,
    call_deadline_at timestamp with time zone,
    reported_failure jsonb,
    cost_unknown_reason text,
    breaker_probe boolean DEFAULT false NOT NULL,
    next_check_at timestamp with time zone,
    check_delay_ms integer,
    needs_operator boolean DEFAULT false NOT NULL,
    unknown_since timestamp with time zone,
    call_token uuid,
    call_grace_ms integer,
    replay_lands_by timestamp with time zone,
    replay_effect_unknown boolean DEFAULT false NOT NULL,
    worst_case numeric,
    worst_case_currency text,
    CONSTRAINT attempts_cached_input_tokens_check CHECK ((cached_input_tokens >= 0)),
    CONSTRAINT attempts_cached_within_input CHECK ((cached_input_tokens <= input_tokens)),
    CONSTRAINT attempts_call_deadline_after_start CHECK (((call_deadline_at IS NULL) OR ((started_at IS NOT NULL) AND (call_deadline_at >= started_at)))),
    CONSTRAINT attempts_call_ends_after_start CHECK (((call_ended_at IS NULL) OR (started_at IS NOT NULL))),
    CONSTRAINT attempts_call_grace_ms_check CHECK ((call_grace_ms >= 0)),
    CONSTRAINT attempts_call_grace_with_start CHECK (((call_grace_ms IS NULL) OR (started_at IS NOT NULL))),
    CONSTRAINT attempts_call_outcome_check CHECK ((call_outcome = ANY (ARRAY['won'::text, 'lost'::text, 'rejected'::text, 'failed'::text]))),
    CONSTRAINT attempts_call_token_with_start CHECK (((call_token IS NULL) OR (started_at IS NOT NULL))),
    CONSTRAINT attempts_check CHECK ((id = (((job_id)::text || ':'::text) || (seq)::text))),
    CONSTRAINT attempts_check1 CHECK (((state = ANY (ARRAY['starting'::text, 'running'::text, 'unknown'::text])) = (finished_at IS NULL))),
    CONSTRAINT attempts_check_delay_ms_check CHECK ((check_delay_ms > 0)),
    CONSTRAINT attempts_cost_check CHECK ((cost >= (0)::numeric)),
    CONSTRAINT attempts_cost_currency_check CHECK ((cost_currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT attempts_cost_has_currency CHECK (((cost IS NULL) = (cost_currency IS NULL))),
    CONSTRAINT attempts_input_tokens_check CHECK ((input_tokens >= 0)),
    CONSTRAINT attempts_output_tokens_check CHECK ((output_tokens >= 0)),
    CONSTRAINT attempts_replay_in_doubt_is_not_failed_by_machine CHECK (((NOT replay_effect_unknown) OR (state <> 'failed'::text) OR ((error ->> 'code'::text) = 'operator'::text))),
    CONSTRAINT attempts_seq_check CHECK ((seq >= 1)),
    CONSTRAINT attempts_state_check CHECK ((state = ANY (ARRAY['starting'::text, 'running'::text, 'succeeded'::text, 'lost'::text, 'failed'::text, 'unknown'::text, 'cancelled'::text]))),
    CONSTRAINT attempts_success_answer_after_start CHECK (((success_answered_at IS NULL) OR (started_at IS NOT NULL))),
    CONSTRAINT attempts_success_answer_is_not_failed_by_machine CHECK (((success_answered_at IS NULL) OR (state <> ALL (ARRAY['failed'::text, 'cancelled'::text])) OR ((error ->> 'code'::text) = 'operator'::text))),
    CONSTRAINT attempts_usage_with_call_end CHECK ((((call_outcome IS NULL) OR (call_ended_at IS NOT NULL)) AND ((call_outcome IS NOT NULL) OR ((input_tokens IS NULL) AND (cached_input_tokens IS NULL) AND (output_tokens IS NULL) AND (cost IS NULL))))),
    CONSTRAINT attempts_worst_case_check CHECK ((worst_case >= (0)::numeric)),
    CONSTRAINT attempts_worst_case_currency_check CHECK ((worst_case_currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT attempts_worst_case_has_currency CHECK (((worst_case IS NULL) = (worst_case_currency IS NULL)))
);

--
-- Name: attempt_counted_cost(public.attempts); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempt_counted_cost(a public.attempts) RETURNS numeric
    LANGUAGE sql IMMUTABLE
    AS $$
  SELECT CASE
    WHEN a.call_outcome IS NOT NULL AND a.cost IS NOT NULL AND a.cost_currency = a.worst_case_currency
      THEN a.cost
    WHEN a.finished_at IS NOT NULL AND a.started_at IS NULL THEN 0
    ELSE a.worst_case
  END
$$;

--
-- Name: attempt_may_take_effect(public.attempts); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempt_may_take_effect(a public.attempts) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  SELECT a.state IN ('starting', 'running', 'unknown')
      OR (a.started_at IS NOT NULL AND a.call_ended_at IS NULL
          AND coalesce(a.call_deadline_at, 'infinity') > now())
$$;

--
-- Name: attempt_replays_answer_once(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempt_replays_answer_once() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NEW.attempt_id <> OLD.attempt_id OR NEW.began_at <> OLD.began_at
     OR NEW.lands_by <> OLD.lands_by OR OLD.answered_at IS NOT NULL THEN
    RAISE EXCEPTION 'attempt_replays_answered_once: replay % of attempt % is written once', OLD.id, OLD.attempt_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'attempt_replays_answered_once';
  END IF;
  IF NEW.answered_at IS NOT NULL THEN
    UPDATE attempts SET replay_lands_by = (
      SELECT max(r.lands_by) FROM attempt_replays r
       WHERE r.attempt_id = NEW.attempt_id AND r.answered_at IS NULL AND r.id <> NEW.id),
           -- An answer that tells what the key did clears the doubt; a lost one raises it.
           replay_effect_unknown = (NEW.verdict = 'no_news' AND state = 'unknown')
     WHERE id = NEW.attempt_id;
  END IF;
  RETURN NEW;
END $$;

--
-- Name: attempt_replays_only_inside_the_key_window(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempt_replays_only_inside_the_key_window() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
  kept attempt_sends;
  attempt_state text;
  job_status text;
BEGIN
  NEW.began_at := clock_timestamp();
  NEW.lands_by := NEW.began_at + NEW.land_window_ms * interval '1 millisecond';
  -- The attempt's row first (as a failure report takes it, then its sends row): the replay
  -- marks itself there, so a report written after this waits for it and then sees it.
  UPDATE attempts SET replay_lands_by = greatest(coalesce(replay_lands_by, NEW.lands_by), NEW.lands_by)
   WHERE id = NEW.attempt_id AND state = 'unknown'
   RETURNING state INTO attempt_state;
  SELECT j.terminal_status INTO job_status
    FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE a.id = NEW.attempt_id;
  IF attempt_state IS NULL THEN
    SELECT state INTO attempt_state FROM attempts WHERE id = NEW.attempt_id;
  END IF;
  SELECT * INTO kept FROM attempt_sends WHERE attempt_id = NEW.attempt_id FOR SHARE;
  IF kept.body IS NULL THEN
    RAISE EXCEPTION 'attempt_replays_inside_key_window: attempt % has no request kept to replay', NEW.attempt_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'attempt_replays_inside_key_window';
  END IF;
  IF clock_timestamp() >= kept.replay_until THEN
    RAISE EXCEPTION 'attempt_replays_inside_key_window: the key window of attempt % allowed replays until %', NEW.attempt_id, kept.replay_until
      USING ERRCODE = 'check_violation', CONSTRAINT = 'attempt_replays_inside_key_window';
  END IF;
  IF attempt_state IS DISTINCT FROM 'unknown' OR job_status IS NOT NULL THEN
    RAISE EXCEPTION 'attempt_replays_inside_key_window: attempt % is % and its job %; only an unknown attempt of an open job is replayed', NEW.attempt_id, attempt_state, coalesce(job_status, 'open')
      USING ERRCODE = 'check_violation', CONSTRAINT = 'attempt_replays_inside_key_window';
  END IF;
  RETURN NEW;
END $$;

--
-- Name: attempt_sends_drop_body_when_settled(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempt_sends_drop_body_when_settled() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  UPDATE attempt_sends SET body = NULL WHERE attempt_id = NEW.id AND body IS NOT NULL;
  RETURN NULL;
END $$;

--
-- Name: attempt_sends_keep_their_window(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempt_sends_keep_their_window() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NEW.attempt_id <> OLD.attempt_id OR NEW.first_sent_at <> OLD.first_sent_at
     OR NEW.key_window_ms <> OLD.key_window_ms OR NEW.margin_ms <> OLD.margin_ms
     OR NEW.replay_until <> OLD.replay_until
     OR (NEW.body IS NOT NULL AND NEW.body IS DISTINCT FROM OLD.body) THEN
    RAISE EXCEPTION 'attempt_sends_fixed: the request attempt % was first sent with, and its key window, never change', OLD.attempt_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'attempt_sends_fixed';
  END IF;
  RETURN NEW;
END $$;

--
-- Name: attempt_sends_on_this_clock(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempt_sends_on_this_clock() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  NEW.first_sent_at := now();
  NEW.replay_until := now() + (NEW.key_window_ms - NEW.margin_ms) * interval '1 millisecond';
  RETURN NEW;
END $$;

--
-- Name: attempts_guard_transition(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempts_guard_transition() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NEW.id <> OLD.id OR NEW.job_id <> OLD.job_id OR NEW.seq <> OLD.seq
     OR NEW.provider <> OLD.provider OR NEW.exclusive <> OLD.exclusive
     OR NEW.read_version <> OLD.read_version THEN
    RAISE EXCEPTION 'attempt % identity is immutable', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.state = OLD.state THEN
    RETURN NEW;
  END IF;
  IF NOT (
       (OLD.state = 'starting' AND NEW.state IN ('running', 'failed', 'unknown', 'cancelled'))
    OR (OLD.state = 'running'  AND NEW.state IN ('succeeded', 'lost', 'failed', 'unknown', 'cancelled'))
    OR (OLD.state = 'unknown'  AND NEW.state IN ('succeeded', 'lost', 'failed', 'cancelled'))
  ) THEN
    RAISE EXCEPTION 'attempt % cannot move from % to %', OLD.id, OLD.state, NEW.state
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

--
-- Name: attempts_no_record_of_breaching_provider(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempts_no_record_of_breaching_provider() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM provider_record_breaches WHERE provider = NEW.provider) THEN
    RAISE EXCEPTION 'attempt %: provider % has answered success in breach of its contract, so "no record" proves nothing', NEW.id, NEW.provider
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

--
-- Name: attempts_note_record_breach(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempts_note_record_breach() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  INSERT INTO provider_record_breaches (provider, attempt_id)
  VALUES (NEW.provider, NEW.id)
  ON CONFLICT (provider) DO NOTHING;
  RETURN NULL;
END $$;

--
-- Name: attempts_note_unknown_since(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempts_note_unknown_since() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  NEW.unknown_since := now();
  RETURN NEW;
END $$;

--
-- Name: attempts_reserve_within_budgets(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempts_reserve_within_budgets() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: attempts_settle_reservations(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempts_settle_reservations() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: attempts_wake_on_settle(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.attempts_wake_on_settle() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  NEW.next_check_at := now();
  RETURN NEW;
END $$;

--
-- Name: budget_period_start(text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.budget_period_start(period text, at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT date_trunc(period, at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
  $$;

--
-- Name: budget_reservation_settles_at(public.attempts); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.budget_reservation_settles_at(a public.attempts) RETURNS numeric
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE
      WHEN (a.call_outcome IS NOT NULL AND a.cost IS NOT NULL) OR a.finished_at IS NOT NULL
        THEN attempt_counted_cost(a)
    END
  $$;

--
-- Name: certification_restores_eligibility(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.certification_restores_eligibility() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  DELETE FROM provider_decertifications d
   WHERE d.provider = NEW.provider AND d.model = NEW.model AND d.job_type = NEW.job_type
     AND d.contract_version = NEW.contract_version;
  RETURN NULL;
END
$$;

--
-- Name: jobs_guard_outcome(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.jobs_guard_outcome() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NEW.owner_id <> OLD.owner_id OR NEW.idempotency_key <> OLD.idempotency_key
     OR NEW.request_fingerprint <> OLD.request_fingerprint OR NEW.workflow_id <> OLD.workflow_id
     OR NEW.job_type <> OLD.job_type OR NEW.input <> OLD.input
     OR NEW.provider_plan <> OLD.provider_plan OR NEW.mode <> OLD.mode THEN
    RAISE EXCEPTION 'job % intent is immutable', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF OLD.terminal_status IS NOT NULL AND (
       NEW.terminal_status IS DISTINCT FROM OLD.terminal_status
    OR NEW.completed_by IS DISTINCT FROM OLD.completed_by
    OR NEW.result IS DISTINCT FROM OLD.result
    OR NEW.failure IS DISTINCT FROM OLD.failure) THEN
    RAISE EXCEPTION 'job % is % and its outcome is final', OLD.id, OLD.terminal_status
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.version < OLD.version THEN
    RAISE EXCEPTION 'job % version cannot go back', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

--
-- Name: jobs_refuse_release_while_attempts_open(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.jobs_refuse_release_while_attempts_open() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
  open_attempt text;
BEGIN
  SELECT a.id INTO open_attempt FROM attempts a
   WHERE a.job_id = NEW.id AND attempt_may_take_effect(a)
   ORDER BY a.seq LIMIT 1;
  IF open_attempt IS NOT NULL THEN
    RAISE EXCEPTION 'jobs_release_only_when_settled: job % cannot release its key, attempt % may still take effect', NEW.id, open_attempt
      USING ERRCODE = 'check_violation', CONSTRAINT = 'jobs_release_only_when_settled';
  END IF;
  RETURN NEW;
END $$;

--
-- Name: jobs_settle_attempts_on_end(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.jobs_settle_attempts_on_end() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM settle_attempts_of_ended_job(NEW.id, NEW.terminal_status, NEW.completed_by, true);
  RETURN NULL;
END $$;

--
-- Name: metric_deltas_of_attempts(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.metric_deltas_of_attempts() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    INSERT INTO metric_deltas VALUES ('attempts', OLD.state, -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO metric_deltas VALUES ('attempts', NEW.state, 1);
  END IF;
  RETURN NULL;
END $$;

--
-- Name: metric_deltas_of_call_ends(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.metric_deltas_of_call_ends() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: metric_deltas_of_eligibility_changes(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.metric_deltas_of_eligibility_changes() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  INSERT INTO metric_deltas VALUES ('provider_eligibility_changes', NEW.provider || '|' || NEW.change, 1);
  RETURN NULL;
END $$;

--
-- Name: metric_deltas_of_race_events(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.metric_deltas_of_race_events() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  INSERT INTO metric_deltas VALUES ('race_events', '', CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END);
  RETURN NULL;
END $$;

--
-- Name: metric_deltas_of_webhook_deliveries(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.metric_deltas_of_webhook_deliveries() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO metric_deltas
      SELECT 'webhook_deliveries', state, count(*) FROM added GROUP BY state;
    INSERT INTO metric_deltas
      SELECT 'webhook_deliveries_written', '', count(*) FROM added
       WHERE redelivery_of IS NULL HAVING count(*) > 0;
    INSERT INTO metric_deltas
      SELECT 'webhook_events_written', '', count(DISTINCT (job_id, event_key)) FROM added
       WHERE redelivery_of IS NULL HAVING count(*) > 0;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO metric_deltas
      SELECT 'webhook_deliveries', state, sum(n) FROM (
        SELECT state, 1 AS n FROM added UNION ALL SELECT state, -1 FROM removed) moved
      GROUP BY state HAVING sum(n) <> 0;
  ELSE
    INSERT INTO metric_deltas
      SELECT 'webhook_deliveries', state, -count(*) FROM removed GROUP BY state;
  END IF;
  RETURN NULL;
END $$;

--
-- Name: metric_deltas_of_webhook_redeliveries(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.metric_deltas_of_webhook_redeliveries() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  INSERT INTO metric_deltas
    SELECT 'webhook_redeliveries', split_part(redelivered_by, ':', 1), count(*) FROM added
     WHERE redelivery_of IS NOT NULL GROUP BY 2;
  RETURN NULL;
END $$;

--
-- Name: metric_deltas_of_webhook_tries(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.metric_deltas_of_webhook_tries() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  INSERT INTO metric_deltas
    SELECT 'webhook_tries', webhook_try_outcome(status), count(*) FROM added
     GROUP BY webhook_try_outcome(status);
  RETURN NULL;
END $$;

--
-- Name: notify_job_ended(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.notify_job_ended() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM pg_notify('onejob_job_ended', NEW.id::text);
  RETURN NULL;
END
$$;

--
-- Name: provider_decertification_ends(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.provider_decertification_ends() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: provider_decertification_of_certification_in_force(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.provider_decertification_of_certification_in_force() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: provider_decertification_recorded(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.provider_decertification_recorded() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: provider_decertifications_unchanged(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.provider_decertifications_unchanged() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  RAISE EXCEPTION 'a decertification of % for % is not edited', OLD.provider, OLD.job_type
    USING ERRCODE = 'check_violation';
END
$$;

--
-- Name: provider_eligibility_changes_kept(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.provider_eligibility_changes_kept() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  RAISE EXCEPTION 'eligibility change % is kept as written', OLD.id
    USING ERRCODE = 'check_violation';
END
$$;

--
-- Name: provider_hold_change_applies(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.provider_hold_change_applies() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: provider_hold_changes_kept(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.provider_hold_changes_kept() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  RAISE EXCEPTION '% row % is kept as written', TG_TABLE_NAME, OLD.id
    USING ERRCODE = 'check_violation';
END
$$;

--
-- Name: provider_holds_by_changes_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.provider_holds_by_changes_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF pg_trigger_depth() < 2 THEN
    RAISE EXCEPTION 'holds are made and released by inserting into %, which keeps who and why',
      coalesce(TG_ARGV[0], 'provider_hold_changes') USING ERRCODE = 'check_violation';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

--
-- Name: report_settlements_kept(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.report_settlements_kept() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  RAISE EXCEPTION '% rows are kept as written', TG_TABLE_NAME USING ERRCODE = 'check_violation';
END
$$;

--
-- Name: settle_attempts_of_ended_job(uuid, text, text, boolean); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.settle_attempts_of_ended_job(ended_job uuid, ending text, winner text, skip_locked boolean) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
  open_ids text[];
  settled integer;
BEGIN
  IF skip_locked THEN
    SELECT array_agg(a.id) INTO open_ids FROM (
      SELECT id FROM attempts
       WHERE job_id = ended_job AND state IN ('starting', 'running') AND id IS DISTINCT FROM winner
       ORDER BY id FOR UPDATE SKIP LOCKED) a;
  ELSE
    SELECT array_agg(a.id) INTO open_ids FROM (
      SELECT id FROM attempts
       WHERE job_id = ended_job AND state IN ('starting', 'running') AND id IS DISTINCT FROM winner
       ORDER BY id FOR UPDATE) a;
  END IF;
  IF open_ids IS NULL THEN
    RETURN 0;
  END IF;
  UPDATE attempts
     SET state = CASE WHEN state = 'starting' THEN 'cancelled' ELSE 'unknown' END,
         error = CASE
                   WHEN state = 'starting' THEN jsonb_build_object(
                     'code', 'job_not_open',
                     'message', 'the job was ' || ending || ' before the request left; nothing was sent')
                   ELSE jsonb_build_object(
                     'code', 'job_ended',
                     'message', 'the job was ' || ending || ' while the call was out; it may still take effect')
                     || CASE WHEN error IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('earlier', error) END
                 END,
         finished_at = CASE WHEN state = 'starting' THEN now() END,
         -- A job that ended without a result: what its call did is looked up at once.
         next_check_at = CASE WHEN state = 'running' AND ending <> 'succeeded'
                              THEN now() ELSE next_check_at END,
         updated_at = now()
   WHERE id = ANY (open_ids) AND state IN ('starting', 'running');
  GET DIAGNOSTICS settled = ROW_COUNT;
  RETURN settled;
END $$;

--
-- Name: webhook_deliveries_final(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_deliveries_final() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF OLD.state <> 'pending' AND NEW.state <> OLD.state THEN
    RAISE EXCEPTION 'webhook delivery % is % and stays so', OLD.id, OLD.state
      USING ERRCODE = 'check_violation';
  END IF;
  IF OLD.body IS NOT NULL AND NEW.body IS DISTINCT FROM OLD.body THEN
    RAISE EXCEPTION 'webhook delivery % has its body already', OLD.id
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.state = 'delivered' AND NEW.body IS NULL AND NOT EXISTS (
       SELECT 1 FROM webhook_event_bodies b
        WHERE b.job_id = NEW.job_id AND b.event_key = NEW.event_key) THEN
    RAISE EXCEPTION 'webhook delivery % cannot be delivered without a body', NEW.id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;

--
-- Name: webhook_event_bodies_fixed(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_event_bodies_fixed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  RAISE EXCEPTION 'the body of event % of job % is fixed', OLD.event_key, OLD.job_id
    USING ERRCODE = 'check_violation';
END
$$;

--
-- Name: webhook_job_ended(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_job_ended() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: webhook_late_result(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_late_result() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  INSERT INTO webhook_deliveries (job_id, endpoint_id, event, event_key)
  SELECT j.id, e.id, 'job.late_result', 'job.late_result:' || a.id
    FROM attempts a
    JOIN jobs j ON j.id = a.job_id
    JOIN webhook_endpoints e ON e.owner_id = j.owner_id
   WHERE a.id = NEW.losing_attempt_id
     AND (j.terminal_status IN ('cancelled', 'failed') OR a.state IN ('failed', 'cancelled'))
     AND e.deleted_at IS NULL AND e.disabled_at IS NULL
     AND 'job.late_result' = ANY (e.events)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

--
-- Name: webhook_operator_actions_kept(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_operator_actions_kept() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  RAISE EXCEPTION 'operator action % on a webhook endpoint is kept as written', OLD.id
    USING ERRCODE = 'check_violation';
END
$$;

--
-- Name: webhook_redelivery_of_its_first(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_redelivery_of_its_first() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
  first webhook_deliveries%ROWTYPE;
  sent text;
BEGIN
  IF NEW.redelivery_of IS NULL THEN
    RETURN NEW;
  END IF;
  SELECT * INTO first FROM webhook_deliveries WHERE id = NEW.redelivery_of;
  IF first.redelivery_of IS NOT NULL OR first.job_id <> NEW.job_id
     OR first.endpoint_id <> NEW.endpoint_id OR first.event_key <> NEW.event_key
     OR first.event <> NEW.event THEN
    RAISE EXCEPTION 'a redelivery names the first delivery of its own event to its own endpoint'
      USING ERRCODE = 'check_violation';
  END IF;
  IF first.state = 'pending' THEN
    RAISE EXCEPTION 'webhook delivery % is still being sent', first.id
      USING ERRCODE = 'check_violation';
  END IF;
  SELECT coalesce(first.body, b.body) INTO sent FROM webhook_event_bodies b
   WHERE b.job_id = NEW.job_id AND b.event_key = NEW.event_key;
  -- Without bytes of its own it sends the event's, fixed once (as the first delivery does).
  IF NEW.body IS NOT NULL AND NEW.body IS DISTINCT FROM coalesce(first.body, sent) THEN
    RAISE EXCEPTION 'a redelivery sends the bytes its event was first sent with'
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;

--
-- Name: webhook_try_outcome(integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_try_outcome(status integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  SELECT CASE WHEN status IS NULL THEN 'no_answer'
              WHEN status BETWEEN 200 AND 299 THEN 'delivered'
              WHEN status = 410 THEN 'gone'
              ELSE 'refused' END
$$;

--
-- Name: admission_hold_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.admission_hold_changes (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    job_type text,
    change text NOT NULL,
    changed_by text NOT NULL,
    reason text NOT NULL,
    CONSTRAINT admission_hold_changes_change_check CHECK ((change = ANY (ARRAY['held'::text, 'released'::text]))),
    CONSTRAINT admission_hold_changes_changed_by_check CHECK (((changed_by ~ '\S'::text) AND (char_length(changed_by) <= 200))),
    CONSTRAINT admission_hold_changes_job_type_check CHECK (((job_type ~ '\S'::text) AND (char_length(job_type) <= 100))),
    CONSTRAINT admission_hold_changes_reason_check CHECK (((reason ~ '\S'::text) AND (char_length(reason) <= 1000)))
);

--
-- Name: admission_hold_changes_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.admission_hold_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.admission_hold_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: admission_holds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.admission_holds (
    job_type text,
    change_id bigint NOT NULL,
    held_at timestamp with time zone NOT NULL,
    held_by text NOT NULL,
    reason text NOT NULL
);

--
-- Name: attempt_replays; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.attempt_replays (
    id bigint NOT NULL,
    attempt_id text NOT NULL,
    began_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    land_window_ms bigint NOT NULL,
    lands_by timestamp with time zone NOT NULL,
    answered_at timestamp with time zone,
    http_status integer,
    verdict text,
    detail jsonb,
    CONSTRAINT attempt_replays_land_window_ms_check CHECK ((land_window_ms > 0)),
    CONSTRAINT attempt_replays_verdict_check CHECK ((verdict = ANY (ARRAY['answered'::text, 'refused'::text, 'in_progress'::text, 'no_news'::text, 'key_reused'::text])))
);

--
-- Name: attempt_replays_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.attempt_replays ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.attempt_replays_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: attempt_sends; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.attempt_sends (
    attempt_id text NOT NULL,
    body bytea,
    first_sent_at timestamp with time zone DEFAULT now() NOT NULL,
    key_window_ms bigint NOT NULL,
    margin_ms bigint NOT NULL,
    replay_until timestamp with time zone NOT NULL,
    CONSTRAINT attempt_sends_check CHECK (((margin_ms > 0) AND (margin_ms < key_window_ms))),
    CONSTRAINT attempt_sends_key_window_ms_check CHECK ((key_window_ms > 0))
);

--
-- Name: budget_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.budget_changes (
    id bigint NOT NULL,
    owner_id text NOT NULL,
    job_type text,
    period text NOT NULL,
    before jsonb,
    after jsonb,
    changed_by text NOT NULL,
    reason text NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: budget_changes_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.budget_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.budget_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: budget_periods; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.budget_periods (
    budget_id bigint NOT NULL,
    period_start timestamp with time zone NOT NULL,
    reserved numeric DEFAULT 0 NOT NULL,
    spent numeric DEFAULT 0 NOT NULL,
    CONSTRAINT budget_periods_reserved_check CHECK ((reserved >= (0)::numeric)),
    CONSTRAINT budget_periods_spent_check CHECK ((spent >= (0)::numeric))
);

--
-- Name: budget_reservations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.budget_reservations (
    attempt_id text NOT NULL,
    budget_id bigint NOT NULL,
    period_start timestamp with time zone NOT NULL,
    worst_case numeric NOT NULL,
    reserved_at timestamp with time zone DEFAULT now() NOT NULL,
    settled_cost numeric,
    settled_at timestamp with time zone,
    CONSTRAINT budget_reservations_check CHECK (((settled_cost IS NULL) = (settled_at IS NULL))),
    CONSTRAINT budget_reservations_settled_cost_check CHECK ((settled_cost >= (0)::numeric)),
    CONSTRAINT budget_reservations_worst_case_check CHECK ((worst_case >= (0)::numeric))
);

--
-- Name: budgets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.budgets (
    id bigint NOT NULL,
    owner_id text NOT NULL,
    job_type text,
    period text NOT NULL,
    currency text NOT NULL,
    amount numeric NOT NULL,
    set_by text NOT NULL,
    reason text NOT NULL,
    set_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT budgets_amount_check CHECK ((amount >= (0)::numeric)),
    CONSTRAINT budgets_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT budgets_period_check CHECK ((period = ANY (ARRAY['day'::text, 'month'::text])))
);

--
-- Name: budgets_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.budgets ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.budgets_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: bulk_cancel_jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.bulk_cancel_jobs (
    bulk_cancel_id bigint NOT NULL,
    job_id uuid NOT NULL,
    result text NOT NULL,
    detail text NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT bulk_cancel_jobs_result_check CHECK ((result = ANY (ARRAY['cancelled'::text, 'refused'::text])))
);

--
-- Name: bulk_cancels; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.bulk_cancels (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    operator text NOT NULL,
    reason text NOT NULL,
    query jsonb NOT NULL,
    matched integer NOT NULL,
    CONSTRAINT bulk_cancels_matched_check CHECK ((matched > 0)),
    CONSTRAINT bulk_cancels_operator_check CHECK (((operator ~ '\S'::text) AND (char_length(operator) <= 200))),
    CONSTRAINT bulk_cancels_query_check CHECK ((jsonb_typeof(query) = 'object'::text)),
    CONSTRAINT bulk_cancels_reason_check CHECK (((reason ~ '\S'::text) AND (char_length(reason) <= 1000)))
);

--
-- Name: bulk_cancels_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.bulk_cancels ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.bulk_cancels_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: certifications; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.certifications (
    provider text NOT NULL,
    model text NOT NULL,
    job_type text NOT NULL,
    contract_version text NOT NULL,
    passed boolean NOT NULL,
    report jsonb NOT NULL,
    certified_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT certifications_contract_version_check CHECK ((contract_version ~ '^[0-9a-f]{16}$'::text))
);

--
-- Name: jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.jobs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id text NOT NULL,
    idempotency_key text NOT NULL,
    request_fingerprint text NOT NULL,
    job_type text NOT NULL,
    input jsonb NOT NULL,
    provider_plan text[] NOT NULL,
    mode text DEFAULT 'exclusive'::text NOT NULL,
    workflow_id text NOT NULL,
    version bigint DEFAULT 0 NOT NULL,
    completed_by text,
    result jsonb,
    terminal_status text,
    failure jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    admitted_at timestamp with time zone,
    notes jsonb DEFAULT '[]'::jsonb NOT NULL,
    key_generation integer DEFAULT 1 NOT NULL,
    key_release jsonb,
    supersedes uuid,
    superseded_by uuid,
    start_lease_until timestamp with time zone,
    CONSTRAINT jobs_check CHECK (((completed_by IS NULL) = (result IS NULL))),
    CONSTRAINT jobs_check1 CHECK (((completed_by IS NOT NULL) = (NOT (terminal_status IS DISTINCT FROM 'succeeded'::text)))),
    CONSTRAINT jobs_check2 CHECK (((terminal_status IS NULL) = (finished_at IS NULL))),
    CONSTRAINT jobs_check3 CHECK (((failure IS NULL) OR (terminal_status = ANY (ARRAY['failed'::text, 'cancelled'::text])))),
    CONSTRAINT jobs_generation_supersedes CHECK (((key_generation = 1) = (supersedes IS NULL))),
    CONSTRAINT jobs_idempotency_key_check CHECK ((idempotency_key ~ '^[\x20-\x7e]{1,255}$'::text)),
    CONSTRAINT jobs_key_generation_check CHECK ((key_generation >= 1)),
    CONSTRAINT jobs_mode_check CHECK ((mode = ANY (ARRAY['exclusive'::text, 'hedged'::text]))),
    CONSTRAINT jobs_notes_check CHECK ((jsonb_typeof(notes) = 'array'::text)),
    CONSTRAINT jobs_owner_id_check CHECK ((owner_id ~ '^[\x20-\x7e]{1,64}$'::text)),
    CONSTRAINT jobs_provider_plan_check CHECK ((cardinality(provider_plan) >= 1)),
    CONSTRAINT jobs_release_is_recorded CHECK (((key_release IS NULL) OR ((key_release ? 'operator'::text) AND (key_release ? 'reason'::text) AND (key_release ? 'at'::text)))),
    CONSTRAINT jobs_release_only_when_ended CHECK (((key_release IS NULL) OR (terminal_status IS NOT NULL))),
    CONSTRAINT jobs_request_fingerprint_check CHECK ((request_fingerprint ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT jobs_superseded_only_when_released CHECK (((superseded_by IS NULL) OR (key_release IS NOT NULL))),
    CONSTRAINT jobs_terminal_status_check CHECK ((terminal_status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'cancelled'::text]))),
    CONSTRAINT jobs_version_check CHECK ((version >= 0))
);

--
-- Name: metric_deltas; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.metric_deltas (
    metric text NOT NULL,
    label text NOT NULL,
    delta bigint NOT NULL
);

--
-- Name: metric_totals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.metric_totals (
    metric text NOT NULL,
    label text NOT NULL,
    n bigint NOT NULL
);

--
-- Name: onejob_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.onejob_migrations (
    id integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: owner_buckets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.owner_buckets (
    owner_id text NOT NULL,
    tokens double precision NOT NULL,
    refilled_at timestamp with time zone NOT NULL,
    bucket text NOT NULL,
    CONSTRAINT owner_buckets_bucket_check CHECK ((bucket = ANY (ARRAY['creates'::text, 'webhooks'::text]))),
    CONSTRAINT owner_create_buckets_tokens_check CHECK ((tokens >= (0)::double precision))
);

--
-- Name: price_ceilings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.price_ceilings (
    id bigint NOT NULL,
    owner_id text,
    job_type text,
    currency text,
    max_job_cost numeric,
    max_multiple numeric,
    set_by text NOT NULL,
    reason text NOT NULL,
    set_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT price_ceilings_check CHECK (((max_job_cost IS NULL) = (currency IS NULL))),
    CONSTRAINT price_ceilings_check1 CHECK (((max_job_cost IS NOT NULL) OR (max_multiple IS NOT NULL))),
    CONSTRAINT price_ceilings_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT price_ceilings_max_job_cost_check CHECK ((max_job_cost >= (0)::numeric)),
    CONSTRAINT price_ceilings_max_multiple_check CHECK ((max_multiple >= (1)::numeric))
);

--
-- Name: price_ceilings_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.price_ceilings ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.price_ceilings_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: provider_callbacks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_callbacks (
    provider text NOT NULL,
    digest text NOT NULL,
    attempt_id text NOT NULL,
    signed_at timestamp with time zone NOT NULL,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    outcome jsonb NOT NULL,
    CONSTRAINT provider_callbacks_digest_check CHECK ((digest ~ '^[0-9a-f]{64}$'::text))
);

--
-- Name: provider_decertifications; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_decertifications (
    provider text NOT NULL,
    model text NOT NULL,
    job_type text NOT NULL,
    contract_version text NOT NULL,
    certified_at timestamp with time zone NOT NULL,
    decertified_at timestamp with time zone DEFAULT now() NOT NULL,
    decided_by text NOT NULL,
    attempt_id text,
    calls integer NOT NULL,
    rejected integer NOT NULL,
    rate double precision GENERATED ALWAYS AS (((rejected)::double precision / (calls)::double precision)) STORED,
    lower_bound double precision NOT NULL,
    threshold double precision NOT NULL,
    confidence double precision NOT NULL,
    window_calls integer NOT NULL,
    window_ms bigint NOT NULL,
    CONSTRAINT provider_decertifications_calls_check CHECK ((calls > 0)),
    CONSTRAINT provider_decertifications_check CHECK (((rejected > 0) AND (rejected <= calls))),
    CONSTRAINT provider_decertifications_check1 CHECK ((window_calls >= calls)),
    CONSTRAINT provider_decertifications_check2 CHECK (((lower_bound > threshold) AND (lower_bound <= ((rejected)::double precision / (calls)::double precision)))),
    CONSTRAINT provider_decertifications_confidence_check CHECK (((confidence > (0.5)::double precision) AND (confidence < (1)::double precision))),
    CONSTRAINT provider_decertifications_decided_by_check CHECK (((decided_by ~ '\S'::text) AND (char_length(decided_by) <= 200))),
    CONSTRAINT provider_decertifications_threshold_check CHECK (((threshold >= (0)::double precision) AND (threshold < (1)::double precision))),
    CONSTRAINT provider_decertifications_window_ms_check CHECK ((window_ms > 0))
);

--
-- Name: provider_eligibility_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_eligibility_changes (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    provider text NOT NULL,
    model text NOT NULL,
    job_type text NOT NULL,
    contract_version text NOT NULL,
    change text NOT NULL,
    changed_by text NOT NULL,
    detail jsonb NOT NULL,
    CONSTRAINT provider_eligibility_changes_change_check CHECK ((change = ANY (ARRAY['lost'::text, 'regained'::text]))),
    CONSTRAINT provider_eligibility_changes_changed_by_check CHECK ((changed_by ~ '\S'::text)),
    CONSTRAINT provider_eligibility_changes_detail_check CHECK ((jsonb_typeof(detail) = 'object'::text))
);

--
-- Name: provider_eligibility_changes_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.provider_eligibility_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.provider_eligibility_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: provider_health; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_health (
    provider text NOT NULL,
    cooldown_until timestamp with time zone,
    breaker text DEFAULT 'closed'::text NOT NULL,
    opened_at timestamp with time zone,
    reason text,
    probe_attempt_id text,
    probe_started_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT provider_health_breaker_check CHECK ((breaker = ANY (ARRAY['closed'::text, 'open'::text, 'half_open'::text]))),
    CONSTRAINT provider_health_check CHECK (((breaker = 'closed'::text) OR (opened_at IS NOT NULL))),
    CONSTRAINT provider_health_check1 CHECK (((breaker = 'half_open'::text) = ((probe_attempt_id IS NOT NULL) AND (probe_started_at IS NOT NULL))))
);

--
-- Name: provider_hold_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_hold_changes (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    provider text NOT NULL,
    change text NOT NULL,
    changed_by text NOT NULL,
    reason text NOT NULL,
    CONSTRAINT provider_hold_changes_change_check CHECK ((change = ANY (ARRAY['held'::text, 'released'::text]))),
    CONSTRAINT provider_hold_changes_changed_by_check CHECK (((changed_by ~ '\S'::text) AND (char_length(changed_by) <= 200))),
    CONSTRAINT provider_hold_changes_provider_check CHECK (((provider ~ '\S'::text) AND (char_length(provider) <= 200))),
    CONSTRAINT provider_hold_changes_reason_check CHECK (((reason ~ '\S'::text) AND (char_length(reason) <= 1000)))
);

--
-- Name: provider_hold_changes_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.provider_hold_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.provider_hold_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: provider_holds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_holds (
    provider text NOT NULL,
    change_id bigint NOT NULL,
    held_at timestamp with time zone NOT NULL,
    held_by text NOT NULL,
    reason text NOT NULL
);

--
-- Name: provider_record_breaches; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_record_breaches (
    provider text NOT NULL,
    attempt_id text NOT NULL,
    seen_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: race_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.race_events (
    id bigint NOT NULL,
    job_id uuid NOT NULL,
    losing_attempt_id text NOT NULL,
    winning_attempt_id text,
    expected_version bigint NOT NULL,
    observed_version bigint NOT NULL,
    occurred_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT race_events_check CHECK (((winning_attempt_id IS NULL) OR (winning_attempt_id <> losing_attempt_id)))
);

--
-- Name: race_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.race_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: race_events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.race_events_id_seq OWNED BY public.race_events.id;

--
-- Name: report_settlement_rows; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.report_settlement_rows (
    settlement_id bigint NOT NULL,
    line integer NOT NULL,
    attempt_id text NOT NULL,
    outcome text NOT NULL,
    result text NOT NULL,
    detail text NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT report_settlement_rows_line_check CHECK ((line > 0)),
    CONSTRAINT report_settlement_rows_outcome_check CHECK ((outcome = ANY (ARRAY['succeeded'::text, 'failed'::text]))),
    CONSTRAINT report_settlement_rows_result_check CHECK ((result = ANY (ARRAY['settled'::text, 'held'::text, 'refused'::text])))
);

--
-- Name: report_settlements; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.report_settlements (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    provider text NOT NULL,
    operator text NOT NULL,
    reason text NOT NULL,
    source text NOT NULL,
    source_sha256 text NOT NULL,
    counts jsonb NOT NULL,
    CONSTRAINT report_settlements_counts_check CHECK ((jsonb_typeof(counts) = 'object'::text)),
    CONSTRAINT report_settlements_operator_check CHECK (((operator ~ '\S'::text) AND (char_length(operator) <= 200))),
    CONSTRAINT report_settlements_provider_check CHECK (((provider ~ '\S'::text) AND (char_length(provider) <= 200))),
    CONSTRAINT report_settlements_reason_check CHECK (((reason ~ '\S'::text) AND (char_length(reason) <= 1000))),
    CONSTRAINT report_settlements_source_check CHECK ((char_length(source) <= 1000)),
    CONSTRAINT report_settlements_source_sha256_check CHECK ((source_sha256 ~ '^[0-9a-f]{64}$'::text))
);

--
-- Name: report_settlements_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.report_settlements ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.report_settlements_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: webhook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_deliveries (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    "position" bigint NOT NULL,
    job_id uuid NOT NULL,
    endpoint_id uuid NOT NULL,
    event text NOT NULL,
    event_key text NOT NULL,
    state text DEFAULT 'pending'::text NOT NULL,
    body text,
    tries integer DEFAULT 0 NOT NULL,
    claimed_until timestamp with time zone,
    last_status integer,
    last_error text,
    last_try_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    ended_at timestamp with time zone,
    claim_token uuid,
    redelivery_of uuid,
    redelivered_by text,
    redelivery_reason text,
    CONSTRAINT webhook_deliveries_check CHECK (((state = 'pending'::text) = (ended_at IS NULL))),
    CONSTRAINT webhook_deliveries_claim_held CHECK (((claim_token IS NULL) = (claimed_until IS NULL))),
    CONSTRAINT webhook_deliveries_event_check CHECK ((event = ANY (ARRAY['job.succeeded'::text, 'job.failed'::text, 'job.cancelled'::text, 'job.needs_operator'::text, 'job.late_result'::text]))),
    CONSTRAINT webhook_deliveries_redelivered_by_check CHECK (((redelivered_by ~ '\S'::text) AND (char_length(redelivered_by) <= 300))),
    CONSTRAINT webhook_deliveries_redelivery_reason_check CHECK ((char_length(redelivery_reason) <= 1000)),
    CONSTRAINT webhook_deliveries_redelivery_says_who CHECK ((((redelivery_of IS NULL) = (redelivered_by IS NULL)) AND ((redelivery_of IS NULL) = (redelivery_reason IS NULL)))),
    CONSTRAINT webhook_deliveries_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'delivered'::text, 'failed'::text, 'abandoned'::text]))),
    CONSTRAINT webhook_deliveries_tries_check CHECK ((tries >= 0))
);

--
-- Name: webhook_deliveries_position_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.webhook_deliveries ALTER COLUMN "position" ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_deliveries_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: webhook_delivery_tries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_delivery_tries (
    delivery_id uuid NOT NULL,
    n integer NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    status integer,
    error text,
    duration_ms integer NOT NULL,
    CONSTRAINT webhook_delivery_tries_duration_ms_check CHECK ((duration_ms >= 0)),
    CONSTRAINT webhook_delivery_tries_n_check CHECK ((n >= 1))
);

--
-- Name: webhook_endpoint_health; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_endpoint_health (
    endpoint_id uuid NOT NULL,
    failures integer NOT NULL,
    held_until timestamp with time zone,
    held_reason text,
    CONSTRAINT webhook_endpoint_health_check CHECK (((held_until IS NULL) = (held_reason IS NULL))),
    CONSTRAINT webhook_endpoint_health_failures_check CHECK ((failures >= 0)),
    CONSTRAINT webhook_endpoint_health_held_reason_check CHECK ((length(held_reason) <= 300))
);

--
-- Name: webhook_endpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_endpoints (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id text NOT NULL,
    url text NOT NULL,
    events text[] NOT NULL,
    description text,
    disabled_at timestamp with time zone,
    disabled_reason text,
    deleted_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    disabled_by_operator boolean DEFAULT false NOT NULL,
    CONSTRAINT webhook_endpoints_check CHECK (((disabled_at IS NULL) = (disabled_reason IS NULL))),
    CONSTRAINT webhook_endpoints_description_check CHECK ((length(description) <= 500)),
    CONSTRAINT webhook_endpoints_events_check CHECK (((cardinality(events) >= 1) AND (events <@ ARRAY['job.succeeded'::text, 'job.failed'::text, 'job.cancelled'::text, 'job.needs_operator'::text, 'job.late_result'::text]))),
    CONSTRAINT webhook_endpoints_operator_disable_disables CHECK (((NOT disabled_by_operator) OR (disabled_at IS NOT NULL))),
    CONSTRAINT webhook_endpoints_owner_id_check CHECK ((owner_id ~ '^[\x20-\x7e]{1,64}$'::text)),
    CONSTRAINT webhook_endpoints_url_check CHECK (((url ~ '^https?://[^\s]+$'::text) AND (length(url) <= 2000)))
);

--
-- Name: webhook_event_bodies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_event_bodies (
    job_id uuid NOT NULL,
    event_key text NOT NULL,
    body text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: webhook_operator_actions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_operator_actions (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    operator text NOT NULL,
    action text NOT NULL,
    endpoint_id uuid NOT NULL,
    owner_id text NOT NULL,
    reason text NOT NULL,
    CONSTRAINT webhook_operator_actions_action_check CHECK ((action = ANY (ARRAY['disable'::text, 'enable'::text, 'delete'::text]))),
    CONSTRAINT webhook_operator_actions_operator_check CHECK ((((char_length(operator) >= 1) AND (char_length(operator) <= 200)) AND (operator !~ '[[:cntrl:]]'::text))),
    CONSTRAINT webhook_operator_actions_reason_check CHECK (((reason ~ '\S'::text) AND (char_length(reason) <= 2000)))
);

--
-- Name: webhook_operator_actions_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.webhook_operator_actions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_operator_actions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: webhook_secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_secrets (
    id bigint NOT NULL,
    endpoint_id uuid NOT NULL,
    secret text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone
);

--
-- Name: webhook_secrets_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.webhook_secrets ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_secrets_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: race_events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.race_events ALTER COLUMN id SET DEFAULT nextval('public.race_events_id_seq'::regclass);

--
-- Name: admission_hold_changes admission_hold_changes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.admission_hold_changes
    ADD CONSTRAINT admission_hold_changes_pkey PRIMARY KEY (id);

--
-- Name: admission_holds admission_holds_change_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.admission_holds
    ADD CONSTRAINT admission_holds_change_id_key UNIQUE (change_id);

--
-- Name: attempt_replays attempt_replays_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.attempt_replays
    ADD CONSTRAINT attempt_replays_pkey PRIMARY KEY (id);

--
-- Name: attempt_sends attempt_sends_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.attempt_sends
    ADD CONSTRAINT attempt_sends_pkey PRIMARY KEY (attempt_id);

--
-- Name: attempts attempts_job_id_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.attempts
    ADD CONSTRAINT attempts_job_id_id_key UNIQUE (job_id, id);

--
-- Name: attempts attempts_job_id_seq_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.attempts
    ADD CONSTRAINT attempts_job_id_seq_key UNIQUE (job_id, seq);

--
-- Name: attempts attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.attempts
    ADD CONSTRAINT attempts_pkey PRIMARY KEY (id);

--
-- Name: budget_changes budget_changes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.budget_changes
    ADD CONSTRAINT budget_changes_pkey PRIMARY KEY (id);

--
-- Name: budget_periods budget_periods_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.budget_periods
    ADD CONSTRAINT budget_periods_pkey PRIMARY KEY (budget_id, period_start);

--
-- Name: budget_reservations budget_reservations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.budget_reservations
    ADD CONSTRAINT budget_reservations_pkey PRIMARY KEY (attempt_id, budget_id);

--
-- Name: budgets budgets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.budgets
    ADD CONSTRAINT budgets_pkey PRIMARY KEY (id);

--
-- Name: bulk_cancel_jobs bulk_cancel_jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.bulk_cancel_jobs
    ADD CONSTRAINT bulk_cancel_jobs_pkey PRIMARY KEY (bulk_cancel_id, job_id);

--
-- Name: bulk_cancels bulk_cancels_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.bulk_cancels
    ADD CONSTRAINT bulk_cancels_pkey PRIMARY KEY (id);

--
-- Name: certifications certifications_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.certifications
    ADD CONSTRAINT certifications_pkey PRIMARY KEY (provider, model, job_type, contract_version);

--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);

--
-- Name: jobs jobs_superseded_by_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_superseded_by_key UNIQUE (superseded_by);

--
-- Name: jobs jobs_supersedes_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_supersedes_key UNIQUE (supersedes);

--
-- Name: jobs jobs_workflow_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_workflow_id_key UNIQUE (workflow_id);

--
-- Name: metric_totals metric_totals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.metric_totals
    ADD CONSTRAINT metric_totals_pkey PRIMARY KEY (metric, label);

--
-- Name: onejob_migrations onejob_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.onejob_migrations
    ADD CONSTRAINT onejob_migrations_pkey PRIMARY KEY (id);

--
-- Name: owner_buckets owner_buckets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.owner_buckets
    ADD CONSTRAINT owner_buckets_pkey PRIMARY KEY (owner_id, bucket);

--
-- Name: price_ceilings price_ceilings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.price_ceilings
    ADD CONSTRAINT price_ceilings_pkey PRIMARY KEY (id);

--
-- Name: provider_callbacks provider_callbacks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_callbacks
    ADD CONSTRAINT provider_callbacks_pkey PRIMARY KEY (provider, digest);

--
-- Name: provider_decertifications provider_decertifications_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_decertifications
    ADD CONSTRAINT provider_decertifications_pkey PRIMARY KEY (provider, model, job_type, contract_version);

--
-- Name: provider_eligibility_changes provider_eligibility_changes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_eligibility_changes
    ADD CONSTRAINT provider_eligibility_changes_pkey PRIMARY KEY (id);

--
-- Name: provider_health provider_health_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_health
    ADD CONSTRAINT provider_health_pkey PRIMARY KEY (provider);

--
-- Name: provider_hold_changes provider_hold_changes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_hold_changes
    ADD CONSTRAINT provider_hold_changes_pkey PRIMARY KEY (id);

--
-- Name: provider_holds provider_holds_change_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_holds
    ADD CONSTRAINT provider_holds_change_id_key UNIQUE (change_id);

--
-- Name: provider_holds provider_holds_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_holds
    ADD CONSTRAINT provider_holds_pkey PRIMARY KEY (provider);

--
-- Name: provider_record_breaches provider_record_breaches_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_record_breaches
    ADD CONSTRAINT provider_record_breaches_pkey PRIMARY KEY (provider);

--
-- Name: race_events race_events_losing_attempt_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.race_events
    ADD CONSTRAINT race_events_losing_attempt_id_key UNIQUE (losing_attempt_id);

--
-- Name: race_events race_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.race_events
    ADD CONSTRAINT race_events_pkey PRIMARY KEY (id);

--
-- Name: report_settlement_rows report_settlement_rows_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.report_settlement_rows
    ADD CONSTRAINT report_settlement_rows_pkey PRIMARY KEY (settlement_id, line);

--
-- Name: report_settlements report_settlements_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.report_settlements
    ADD CONSTRAINT report_settlements_pkey PRIMARY KEY (id);

--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);

--
-- Name: webhook_deliveries webhook_deliveries_position_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_position_key UNIQUE ("position");

--
-- Name: webhook_delivery_tries webhook_delivery_tries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_delivery_tries
    ADD CONSTRAINT webhook_delivery_tries_pkey PRIMARY KEY (delivery_id, n);

--
-- Name: webhook_endpoint_health webhook_endpoint_health_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoint_health
    ADD CONSTRAINT webhook_endpoint_health_pkey PRIMARY KEY (endpoint_id);

--
-- Name: webhook_endpoints webhook_endpoints_id_owner_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_id_owner_key UNIQUE (id, owner_id);

--
-- Name: webhook_endpoints webhook_endpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);

--
-- Name: webhook_event_bodies webhook_event_bodies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_event_bodies
    ADD CONSTRAINT webhook_event_bodies_pkey PRIMARY KEY (job_id, event_key);

--
-- Name: webhook_operator_actions webhook_operator_actions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_operator_actions
    ADD CONSTRAINT webhook_operator_actions_pkey PRIMARY KEY (id);

--
-- Name: webhook_secrets webhook_secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_secrets
    ADD CONSTRAINT webhook_secrets_pkey PRIMARY KEY (id);

--
-- Name: webhook_secrets webhook_secrets_sealed; Type: CHECK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE public.webhook_secrets
    ADD CONSTRAINT webhook_secrets_sealed CHECK ((secret ~ '^v1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22,}$'::text)) NOT VALID;

--
-- Name: admission_holds_one_per_scope; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX admission_holds_one_per_scope ON public.admission_holds USING btree (COALESCE(job_type, ''::text));

--
-- Name: attempt_replays_of_attempt; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX attempt_replays_of_attempt ON public.attempt_replays USING btree (attempt_id, began_at);

--
-- Name: attempts_call_ends_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX attempts_call_ends_idx ON public.attempts USING btree (call_ended_at) WHERE (call_outcome IS NOT NULL);

--
-- Name: attempts_checks_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX attempts_checks_due ON public.attempts USING btree (next_check_at) WHERE (next_check_at IS NOT NULL);

--
-- Name: attempts_in_flight_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX attempts_in_flight_idx ON public.attempts USING btree (state, job_id) WHERE (state = ANY (ARRAY['starting'::text, 'running'::text, 'unknown'::text]));

--
-- Name: attempts_one_in_flight_per_job; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX attempts_one_in_flight_per_job ON public.attempts USING btree (job_id) WHERE (exclusive AND (state = ANY (ARRAY['starting'::text, 'running'::text, 'unknown'::text])));

--
-- Name: attempts_provider_call_ends_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX attempts_provider_call_ends_idx ON public.attempts USING btree (provider, call_ended_at DESC) WHERE (call_ended_at IS NOT NULL);

--
-- Name: attempts_recent_successes_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX attempts_recent_successes_idx ON public.attempts USING btree (provider, finished_at DESC) WHERE ((state = 'succeeded'::text) AND (started_at IS NOT NULL));

--
-- Name: budget_changes_by_owner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX budget_changes_by_owner ON public.budget_changes USING btree (owner_id, changed_at);

--
-- Name: budget_reservations_by_period; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX budget_reservations_by_period ON public.budget_reservations USING btree (budget_id, period_start);

--
-- Name: budgets_one_per_scope; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX budgets_one_per_scope ON public.budgets USING btree (owner_id, COALESCE(job_type, ''::text), period);

--
-- Name: jobs_awaiting_admission_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_awaiting_admission_idx ON public.jobs USING btree (created_at) WHERE ((admitted_at IS NULL) AND (terminal_status IS NULL));

--
-- Name: jobs_key_generation_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX jobs_key_generation_idx ON public.jobs USING btree (owner_id, idempotency_key, key_generation);

--
-- Name: jobs_live_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX jobs_live_key_idx ON public.jobs USING btree (owner_id, idempotency_key) WHERE (key_release IS NULL);

--
-- Name: jobs_open_by_owner_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_open_by_owner_idx ON public.jobs USING btree (owner_id) WHERE (terminal_status IS NULL);

--
-- Name: jobs_open_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_open_idx ON public.jobs USING btree (created_at, id) WHERE (terminal_status IS NULL);

--
-- Name: jobs_owner_page_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_owner_page_idx ON public.jobs USING btree (owner_id, created_at DESC, id DESC);

--
-- Name: price_ceilings_one_per_scope; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX price_ceilings_one_per_scope ON public.price_ceilings USING btree (COALESCE(owner_id, ''::text), COALESCE(job_type, ''::text));

--
-- Name: provider_eligibility_changes_provider_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX provider_eligibility_changes_provider_idx ON public.provider_eligibility_changes USING btree (provider, job_type, id);

--
-- Name: provider_hold_changes_provider_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX provider_hold_changes_provider_idx ON public.provider_hold_changes USING btree (provider, id);

--
-- Name: race_events_job_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX race_events_job_idx ON public.race_events USING btree (job_id, occurred_at);

--
-- Name: report_settlement_rows_attempt_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX report_settlement_rows_attempt_idx ON public.report_settlement_rows USING btree (attempt_id);

--
-- Name: webhook_deliveries_endpoint_ended_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_endpoint_ended_idx ON public.webhook_deliveries USING btree (endpoint_id, ended_at) WHERE (ended_at IS NOT NULL);

--
-- Name: webhook_deliveries_job_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_job_idx ON public.webhook_deliveries USING btree (job_id, "position");

--
-- Name: webhook_deliveries_one_first_per_event; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_deliveries_one_first_per_event ON public.webhook_deliveries USING btree (job_id, endpoint_id, event_key) WHERE (redelivery_of IS NULL);

--
-- Name: webhook_deliveries_one_redelivery_waiting; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_deliveries_one_redelivery_waiting ON public.webhook_deliveries USING btree (redelivery_of) WHERE (state = 'pending'::text);

--
-- Name: webhook_deliveries_pending_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_pending_idx ON public.webhook_deliveries USING btree (created_at) WHERE (state = 'pending'::text);

--
-- Name: webhook_deliveries_redelivery_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_redelivery_idx ON public.webhook_deliveries USING btree (redelivery_of) WHERE (redelivery_of IS NOT NULL);

--
-- Name: webhook_endpoint_health_held_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_endpoint_health_held_idx ON public.webhook_endpoint_health USING btree (held_until) WHERE (held_until IS NOT NULL);

--
-- Name: webhook_endpoints_owner_live_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_endpoints_owner_live_idx ON public.webhook_endpoints USING btree (owner_id) WHERE (deleted_at IS NULL);

--
-- Name: webhook_operator_actions_endpoint_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_operator_actions_endpoint_idx ON public.webhook_operator_actions USING btree (endpoint_id, id);

--
-- Name: webhook_operator_actions_owner_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_operator_actions_owner_idx ON public.webhook_operator_actions USING btree (owner_id, id);

--
-- Name: webhook_secrets_expiring_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_secrets_expiring_idx ON public.webhook_secrets USING btree (expires_at) WHERE (expires_at IS NOT NULL);

--
-- Name: webhook_secrets_one_current; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_secrets_one_current ON public.webhook_secrets USING btree (endpoint_id) WHERE (expires_at IS NULL);

--
-- Name: admission_hold_changes admission_hold_changes_apply; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER admission_hold_changes_apply AFTER INSERT ON public.admission_hold_changes FOR EACH ROW EXECUTE FUNCTION public.admission_hold_change_applies();

--
-- Name: admission_hold_changes admission_hold_changes_kept; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER admission_hold_changes_kept BEFORE DELETE OR UPDATE ON public.admission_hold_changes FOR EACH ROW EXECUTE FUNCTION public.provider_hold_changes_kept();

--
-- Name: admission_holds admission_holds_by_changes_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER admission_holds_by_changes_only BEFORE INSERT OR DELETE OR UPDATE ON public.admission_holds FOR EACH ROW EXECUTE FUNCTION public.provider_holds_by_changes_only('admission_hold_changes');

--
-- Name: attempt_replays attempt_replays_answered_once; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempt_replays_answered_once BEFORE UPDATE ON public.attempt_replays FOR EACH ROW EXECUTE FUNCTION public.attempt_replays_answer_once();

--
-- Name: attempt_replays attempt_replays_inside_key_window; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempt_replays_inside_key_window BEFORE INSERT ON public.attempt_replays FOR EACH ROW EXECUTE FUNCTION public.attempt_replays_only_inside_the_key_window();

--
-- Name: attempts attempt_sends_dropped_when_settled; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempt_sends_dropped_when_settled AFTER UPDATE OF state ON public.attempts FOR EACH ROW WHEN (((old.state = ANY (ARRAY['running'::text, 'unknown'::text])) AND (new.state = ANY (ARRAY['succeeded'::text, 'lost'::text, 'failed'::text, 'cancelled'::text])))) EXECUTE FUNCTION public.attempt_sends_drop_body_when_settled();

--
-- Name: attempt_sends attempt_sends_fixed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempt_sends_fixed BEFORE UPDATE ON public.attempt_sends FOR EACH ROW EXECUTE FUNCTION public.attempt_sends_keep_their_window();

--
-- Name: attempt_sends attempt_sends_on_postgres_clock; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempt_sends_on_postgres_clock BEFORE INSERT ON public.attempt_sends FOR EACH ROW EXECUTE FUNCTION public.attempt_sends_on_this_clock();

--
-- Name: attempts attempts_count_call_ends; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempts_count_call_ends AFTER UPDATE OF call_outcome ON public.attempts FOR EACH ROW WHEN (((old.call_outcome IS NULL) AND (new.call_outcome IS NOT NULL))) EXECUTE FUNCTION public.metric_deltas_of_call_ends();

--
-- Name: attempts attempts_count_rows; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempts_count_rows AFTER INSERT OR DELETE ON public.attempts FOR EACH ROW EXECUTE FUNCTION public.metric_deltas_of_attempts();

--
-- Name: attempts attempts_count_state_changes; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempts_count_state_changes AFTER UPDATE OF state ON public.attempts FOR EACH ROW WHEN ((old.state IS DISTINCT FROM new.state)) EXECUTE FUNCTION public.metric_deltas_of_attempts();

--
-- Name: attempts attempts_guard_transition; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempts_guard_transition BEFORE UPDATE ON public.attempts FOR EACH ROW EXECUTE FUNCTION public.attempts_guard_transition();

--
-- Name: attempts attempts_no_record_of_breaching_provider; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempts_no_record_of_breaching_provider BEFORE UPDATE OF state ON public.attempts FOR EACH ROW WHEN (((new.state = 'failed'::text) AND ((new.error ->> 'code'::text) = 'never_processed'::text) AND (new.success_answered_at IS NULL))) EXECUTE FUNCTION public.attempts_no_record_of_breaching_provider();

--
-- Name: attempts attempts_note_record_breach; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempts_note_record_breach AFTER UPDATE OF error ON public.attempts FOR EACH ROW WHEN ((((new.error ->> 'code'::text) = 'contract_violation_after_effect'::text) AND ((old.error ->> 'code'::text) IS DISTINCT FROM 'contract_violation_after_effect'::text))) EXECUTE FUNCTION public.attempts_note_record_breach();

--
-- Name: attempts attempts_note_unknown_since; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempts_note_unknown_since BEFORE UPDATE OF state ON public.attempts FOR EACH ROW WHEN (((old.state <> 'unknown'::text) AND (new.state = 'unknown'::text))) EXECUTE FUNCTION public.attempts_note_unknown_since();

--
-- Name: attempts attempts_reserve_within_budgets; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempts_reserve_within_budgets AFTER INSERT ON public.attempts FOR EACH ROW EXECUTE FUNCTION public.attempts_reserve_within_budgets();

--
-- Name: attempts attempts_settle_reservations; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempts_settle_reservations AFTER UPDATE OF state, finished_at, call_outcome, cost, cost_currency ON public.attempts FOR EACH ROW WHEN ((new.worst_case IS NOT NULL)) EXECUTE FUNCTION public.attempts_settle_reservations();

--
-- Name: attempts attempts_wake_on_settle; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER attempts_wake_on_settle BEFORE UPDATE OF state ON public.attempts FOR EACH ROW WHEN (((old.state = 'unknown'::text) AND (new.state <> 'unknown'::text))) EXECUTE FUNCTION public.attempts_wake_on_settle();

--
-- Name: bulk_cancel_jobs bulk_cancel_jobs_kept; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER bulk_cancel_jobs_kept BEFORE DELETE OR UPDATE ON public.bulk_cancel_jobs FOR EACH ROW EXECUTE FUNCTION public.report_settlements_kept();

--
-- Name: bulk_cancels bulk_cancels_kept; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER bulk_cancels_kept BEFORE DELETE OR UPDATE ON public.bulk_cancels FOR EACH ROW EXECUTE FUNCTION public.report_settlements_kept();

--
-- Name: certifications certifications_restore_eligibility; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER certifications_restore_eligibility AFTER INSERT OR UPDATE ON public.certifications FOR EACH ROW WHEN (new.passed) EXECUTE FUNCTION public.certification_restores_eligibility();

--
-- Name: jobs jobs_guard_outcome; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER jobs_guard_outcome BEFORE UPDATE ON public.jobs FOR EACH ROW EXECUTE FUNCTION public.jobs_guard_outcome();

--
-- Name: jobs jobs_notify_ended; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER jobs_notify_ended AFTER UPDATE OF terminal_status ON public.jobs FOR EACH ROW WHEN (((old.terminal_status IS NULL) AND (new.terminal_status IS NOT NULL))) EXECUTE FUNCTION public.notify_job_ended();

--
-- Name: jobs jobs_release_only_when_settled; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER jobs_release_only_when_settled BEFORE UPDATE OF key_release ON public.jobs FOR EACH ROW WHEN (((old.key_release IS NULL) AND (new.key_release IS NOT NULL))) EXECUTE FUNCTION public.jobs_refuse_release_while_attempts_open();

--
-- Name: jobs jobs_settle_attempts_on_end; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER jobs_settle_attempts_on_end AFTER UPDATE OF terminal_status ON public.jobs FOR EACH ROW WHEN (((old.terminal_status IS NULL) AND (new.terminal_status IS NOT NULL))) EXECUTE FUNCTION public.jobs_settle_attempts_on_end();

--
-- Name: jobs jobs_webhook_ended; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER jobs_webhook_ended AFTER UPDATE OF terminal_status ON public.jobs FOR EACH ROW WHEN (((old.terminal_status IS NULL) AND (new.terminal_status IS NOT NULL))) EXECUTE FUNCTION public.webhook_job_ended();

--
-- Name: provider_decertifications provider_decertifications_end; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER provider_decertifications_end BEFORE DELETE ON public.provider_decertifications FOR EACH ROW EXECUTE FUNCTION public.provider_decertification_ends();

--
-- Name: provider_decertifications provider_decertifications_in_force; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER provider_decertifications_in_force BEFORE INSERT ON public.provider_decertifications FOR EACH ROW EXECUTE FUNCTION public.provider_decertification_of_certification_in_force();

--
-- Name: provider_decertifications provider_decertifications_recorded; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER provider_decertifications_recorded AFTER INSERT ON public.provider_decertifications FOR EACH ROW EXECUTE FUNCTION public.provider_decertification_recorded();

--
-- Name: provider_decertifications provider_decertifications_unchanged; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER provider_decertifications_unchanged BEFORE UPDATE ON public.provider_decertifications FOR EACH ROW EXECUTE FUNCTION public.provider_decertifications_unchanged();

--
-- Name: provider_eligibility_changes provider_eligibility_changes_counted; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER provider_eligibility_changes_counted AFTER INSERT ON public.provider_eligibility_changes FOR EACH ROW EXECUTE FUNCTION public.metric_deltas_of_eligibility_changes();

--
-- Name: provider_eligibility_changes provider_eligibility_changes_kept; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER provider_eligibility_changes_kept BEFORE DELETE OR UPDATE ON public.provider_eligibility_changes FOR EACH ROW EXECUTE FUNCTION public.provider_eligibility_changes_kept();

--
-- Name: provider_hold_changes provider_hold_changes_apply; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER provider_hold_changes_apply AFTER INSERT ON public.provider_hold_changes FOR EACH ROW EXECUTE FUNCTION public.provider_hold_change_applies();

--
-- Name: provider_hold_changes provider_hold_changes_kept; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER provider_hold_changes_kept BEFORE DELETE OR UPDATE ON public.provider_hold_changes FOR EACH ROW EXECUTE FUNCTION public.provider_hold_changes_kept();

--
-- Name: provider_holds provider_holds_by_changes_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER provider_holds_by_changes_only BEFORE INSERT OR DELETE OR UPDATE ON public.provider_holds FOR EACH ROW EXECUTE FUNCTION public.provider_holds_by_changes_only();

--
-- Name: race_events race_events_count_rows; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER race_events_count_rows AFTER INSERT OR DELETE ON public.race_events FOR EACH ROW EXECUTE FUNCTION public.metric_deltas_of_race_events();

--
-- Name: race_events race_events_webhook_late_result; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER race_events_webhook_late_result AFTER INSERT ON public.race_events FOR EACH ROW EXECUTE FUNCTION public.webhook_late_result();

--
-- Name: report_settlement_rows report_settlement_rows_kept; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER report_settlement_rows_kept BEFORE DELETE OR UPDATE ON public.report_settlement_rows FOR EACH ROW EXECUTE FUNCTION public.report_settlements_kept();

--
-- Name: report_settlements report_settlements_kept; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER report_settlements_kept BEFORE DELETE OR UPDATE ON public.report_settlements FOR EACH ROW EXECUTE FUNCTION public.report_settlements_kept();

--
-- Name: webhook_deliveries webhook_deliveries_count_deletes; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_deliveries_count_deletes AFTER DELETE ON public.webhook_deliveries REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION public.metric_deltas_of_webhook_deliveries();

--
-- Name: webhook_deliveries webhook_deliveries_count_inserts; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_deliveries_count_inserts AFTER INSERT ON public.webhook_deliveries REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION public.metric_deltas_of_webhook_deliveries();

--
-- Name: webhook_deliveries webhook_deliveries_count_redeliveries; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_deliveries_count_redeliveries AFTER INSERT ON public.webhook_deliveries REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION public.metric_deltas_of_webhook_redeliveries();

--
-- Name: webhook_deliveries webhook_deliveries_count_updates; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_deliveries_count_updates AFTER UPDATE ON public.webhook_deliveries REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION public.metric_deltas_of_webhook_deliveries();

--
-- Name: webhook_deliveries webhook_deliveries_final; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_deliveries_final BEFORE UPDATE ON public.webhook_deliveries FOR EACH ROW EXECUTE FUNCTION public.webhook_deliveries_final();

--
-- Name: webhook_delivery_tries webhook_delivery_tries_count_inserts; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_delivery_tries_count_inserts AFTER INSERT ON public.webhook_delivery_tries REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION public.metric_deltas_of_webhook_tries();

--
-- Name: webhook_event_bodies webhook_event_bodies_fixed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_event_bodies_fixed BEFORE UPDATE ON public.webhook_event_bodies FOR EACH ROW EXECUTE FUNCTION public.webhook_event_bodies_fixed();

--
-- Name: webhook_operator_actions webhook_operator_actions_kept; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_operator_actions_kept BEFORE DELETE OR UPDATE ON public.webhook_operator_actions FOR EACH ROW EXECUTE FUNCTION public.webhook_operator_actions_kept();

--
-- Name: webhook_deliveries webhook_redelivery_of_its_first; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_redelivery_of_its_first BEFORE INSERT ON public.webhook_deliveries FOR EACH ROW EXECUTE FUNCTION public.webhook_redelivery_of_its_first();

--
-- Name: admission_holds admission_holds_change_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.admission_holds
    ADD CONSTRAINT admission_holds_change_id_fkey FOREIGN KEY (change_id) REFERENCES public.admission_hold_changes(id);

--
-- Name: attempt_replays attempt_replays_attempt_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.attempt_replays
    ADD CONSTRAINT attempt_replays_attempt_id_fkey FOREIGN KEY (attempt_id) REFERENCES public.attempt_sends(attempt_id) ON DELETE CASCADE;

--
-- Name: attempt_sends attempt_sends_attempt_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.attempt_sends
    ADD CONSTRAINT attempt_sends_attempt_id_fkey FOREIGN KEY (attempt_id) REFERENCES public.attempts(id) ON DELETE CASCADE;

--
-- Name: attempts attempts_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.attempts
    ADD CONSTRAINT attempts_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;

--
-- Name: budget_periods budget_periods_budget_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.budget_periods
    ADD CONSTRAINT budget_periods_budget_id_fkey FOREIGN KEY (budget_id) REFERENCES public.budgets(id) ON DELETE CASCADE;

--
-- Name: budget_reservations budget_reservations_attempt_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.budget_reservations
    ADD CONSTRAINT budget_reservations_attempt_id_fkey FOREIGN KEY (attempt_id) REFERENCES public.attempts(id) ON DELETE CASCADE;

--
-- Name: budget_reservations budget_reservations_budget_id_period_start_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.budget_reservations
    ADD CONSTRAINT budget_reservations_budget_id_period_start_fkey FOREIGN KEY (budget_id, period_start) REFERENCES public.budget_periods(budget_id, period_start) ON DELETE CASCADE;

--
-- Name: bulk_cancel_jobs bulk_cancel_jobs_bulk_cancel_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.bulk_cancel_jobs
    ADD CONSTRAINT bulk_cancel_jobs_bulk_cancel_id_fkey FOREIGN KEY (bulk_cancel_id) REFERENCES public.bulk_cancels(id);

--
-- Name: jobs jobs_completed_by_attempt_of_job; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_completed_by_attempt_of_job FOREIGN KEY (id, completed_by) REFERENCES public.attempts(job_id, id) DEFERRABLE INITIALLY DEFERRED;

--
-- Name: jobs jobs_superseded_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_superseded_by_fkey FOREIGN KEY (superseded_by) REFERENCES public.jobs(id);

--
-- Name: jobs jobs_supersedes_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_supersedes_fkey FOREIGN KEY (supersedes) REFERENCES public.jobs(id);

--
-- Name: provider_callbacks provider_callbacks_attempt_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_callbacks
    ADD CONSTRAINT provider_callbacks_attempt_id_fkey FOREIGN KEY (attempt_id) REFERENCES public.attempts(id) ON DELETE CASCADE;

--
-- Name: provider_decertifications provider_decertifications_provider_model_job_type_contract_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_decertifications
    ADD CONSTRAINT provider_decertifications_provider_model_job_type_contract_fkey FOREIGN KEY (provider, model, job_type, contract_version) REFERENCES public.certifications(provider, model, job_type, contract_version) ON DELETE CASCADE;

--
-- Name: provider_holds provider_holds_change_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_holds
    ADD CONSTRAINT provider_holds_change_id_fkey FOREIGN KEY (change_id) REFERENCES public.provider_hold_changes(id);

--
-- Name: race_events race_events_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.race_events
    ADD CONSTRAINT race_events_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;

--
-- Name: race_events race_events_job_id_losing_attempt_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.race_events
    ADD CONSTRAINT race_events_job_id_losing_attempt_id_fkey FOREIGN KEY (job_id, losing_attempt_id) REFERENCES public.attempts(job_id, id);

--
-- Name: race_events race_events_job_id_winning_attempt_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.race_events
    ADD CONSTRAINT race_events_job_id_winning_attempt_id_fkey FOREIGN KEY (job_id, winning_attempt_id) REFERENCES public.attempts(job_id, id);

--
-- Name: report_settlement_rows report_settlement_rows_settlement_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.report_settlement_rows
    ADD CONSTRAINT report_settlement_rows_settlement_id_fkey FOREIGN KEY (settlement_id) REFERENCES public.report_settlements(id);

--
-- Name: webhook_deliveries webhook_deliveries_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;

--
-- Name: webhook_deliveries webhook_deliveries_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;

--
-- Name: webhook_deliveries webhook_deliveries_redelivery_of_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_redelivery_of_fkey FOREIGN KEY (redelivery_of) REFERENCES public.webhook_deliveries(id);

--
-- Name: webhook_delivery_tries webhook_delivery_tries_delivery_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_delivery_tries
    ADD CONSTRAINT webhook_delivery_tries_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.webhook_deliveries(id) ON DELETE CASCADE;

--
-- Name: webhook_endpoint_health webhook_endpoint_health_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoint_health
    ADD CONSTRAINT webhook_endpoint_health_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;

--
-- Name: webhook_event_bodies webhook_event_bodies_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_event_bodies
    ADD CONSTRAINT webhook_event_bodies_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;

--
-- Name: webhook_operator_actions webhook_operator_actions_endpoint_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_operator_actions
    ADD CONSTRAINT webhook_operator_actions_endpoint_id_owner_id_fkey FOREIGN KEY (endpoint_id, owner_id) REFERENCES public.webhook_endpoints(id, owner_id);

--
-- Name: webhook_secrets webhook_secrets_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_secrets
    ADD CONSTRAINT webhook_secrets_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;

--
-- PostgreSQL database dump complete
--
