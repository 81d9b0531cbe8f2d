/*
 * onejob's job/attempt protocol, for SPIN.
 *
 * One (owner, key) and the job it names: clients creating it (twice with one intent, once
 * with another), the API's insert-or-find and workflow start, the workflow's attempt loop in
 * exclusive or hedged mode, provider calls that answer, fail, break the contract, drop after
 * doing the work, time out and answer late, status lookups, an operator, a provider callback,
 * and crashes: of the API between its insert and its start, and of the worker in the middle of
 * a call or right after a database step (whose activity then runs again).
 *
 * Bounds (exhaustive within them): 3 clients (2 with intent 1, 1 with intent 2), 3 providers in
 * the plan and so at most 3 attempts, 1 worker crash, 1 API crash, 1 operator resolve and
 * 1 operator cancel, 1 provider callback, 1 "try again". The mode (exclusive or hedged) and
 * whether the job has side effects are chosen at the start; hedged jobs have none (the API
 * refuses hedging with side effects).
 *
 * Each SQL statement is one atomic step, as PostgreSQL's row locks make it; a transaction that
 * holds its rows is one step too (recordAttemptResultIn). An HTTP call to a provider, a status
 * lookup and a workflow's wait are separate steps, so anything may happen between them.
 *
 * Every step names the code that implements it: FILE function.
 *
 * Planted mistakes (each must produce a counterexample; test/protocolModel.test.ts checks):
 *   -DBUG_NO_VERSION_CHECK   the compare-and-swap forgets `version = $2`
 *   -DBUG_UNKNOWN_AS_FAILED  an ambiguous failure of a call counts as failed, side effects or not
 *   -DBUG_NOT_FOUND_ONCE     one "no record" from a status lookup is believed, call over or not
 *   -DBUG_NO_IN_FLIGHT_GUARD the exclusive loop starts the next attempt past an unknown one, and
 *                            the unique index attempts_one_in_flight_per_job is missing
 */

#ifndef NP
#define NP 3                 /* providers in the plan = attempts at most (1..3) */
#endif
#define MAXA 3               /* room for attempts in the arrays below */

/* attempt states (src/domain/job.ts ATTEMPT_STATES); NONE = no row */
#define NONE       0
#define STARTING   1
#define RUNNING    2
#define SUCCEEDED  3
#define LOST       4
#define FAILED     5
#define UNKNOWN    6
#define CANCELLED  7

/* job terminal_status; OPEN = NULL */
#define OPEN       0
#define J_SUCCEEDED 1
#define J_FAILED   2
#define J_CANCELLED 3

/* what a provider did with one call */
#define A_OK        1        /* did the work, answered within the contract */
#define A_DEFINITE  2        /* refused before doing anything (4xx, 5xx before the effect) */
#define A_DROP      3        /* connection dropped; the work may or may not have been done */
#define A_BROKEN    4        /* did the work, answered outside the contract */

/* ---- PostgreSQL: the jobs row of this (owner, key) ---- */
byte jobsForKey;             /* rows with this (owner_id, idempotency_key): UNIQUE */
byte jobIntent;              /* request_fingerprint of the row: 1 or 2 */
bool admitted;               /* admitted_at IS NOT NULL */
byte terminal = OPEN;        /* terminal_status */
byte completedBy;            /* completed_by: an attempt number, 0 = NULL */
byte result;                 /* result: whose payload it is, 0 = NULL */
byte version;                /* version */
bool hedged;                 /* mode */
bool sideEffects;            /* the job type or a provider has side effects */

/* ---- PostgreSQL: attempts rows, by seq (1..NP) ---- */
byte astate[MAXA + 1];
byte readVersion[MAXA + 1];
bool callEnded[MAXA + 1];      /* call_ended_at IS NOT NULL */
byte notFound[MAXA + 1];       /* "no record" answers counted after the call was over */
bool raced[MAXA + 1];          /* a race_events row names it as the loser */

/* ---- the providers' own ledgers (what really happened) ---- */
bool did[MAXA + 1];            /* the provider did the work for this attempt */
bool broken[MAXA + 1];         /* ... and its answer (and status lookup) breaks the contract */
bool windowOver[MAXA + 1];     /* the late-result window of a call that lost its worker passed */

/* ---- Temporal ---- */
bool workflowStarted;        /* one workflow id per (owner, key): a second start is refused */
bool replied[MAXA + 1];        /* the provider-call activity reported back to the workflow */
bool tryAgain;               /* a user's "try again" waiting for the loop */
byte workerCrashes = 1;      /* budgets */
byte apiCrashes = 1;
byte createsLeft = 3;        /* creates not yet sent */

/* ---- ghosts, for properties only ---- */
bool waitsOnOperator;        /* the workflow waits in reconcile for an operator's word */
byte firstTerminal = OPEN;   /* the first terminal status and result ever written */
byte firstResult;

#define CALL_OVER(a)   (callEnded[a] || windowOver[a])
#define IN_FLIGHT(a)   (astate[a] == STARTING || astate[a] == RUNNING || astate[a] == UNKNOWN)
#define HAS_RECORD(a)  (did[a])

/* ================= database steps ================= */

/* ghost: the first outcome ever written, to check that it never changes */
#define FIRST_OUTCOME \
  if \
  :: firstTerminal == OPEN -> firstTerminal = terminal; firstResult = result \
  :: else -> skip \
  fi

/*
 * src/db/compareAndSwap.ts recordAttemptResultIn: the only writer of a job's result.
 *   UPDATE jobs SET result, completed_by, terminal_status = 'succeeded', version = version + 1
 *    WHERE id = $1 AND version = $2 AND completed_by IS NULL
 * Zero rows: a race_events row (ON CONFLICT DO NOTHING) and the attempt `lost` (a `failed` or
 * `cancelled` one keeps its state). Repeating it reports the earlier outcome. The trigger
 * jobs_guard_outcome is left out: the properties must hold on the statement alone.
 */
#ifdef BUG_NO_VERSION_CHECK
#define CAS_GUARD(a)  (completedBy == 0)
#else
#define CAS_GUARD(a)  (version == readVersion[a] && completedBy == 0)
#endif

inline recordResult(a) {
  atomic {
    if
    :: astate[a] == SUCCEEDED || astate[a] == LOST -> skip
    :: astate[a] == RUNNING || astate[a] == UNKNOWN || astate[a] == FAILED || astate[a] == CANCELLED ->
       if
       :: astate[a] != FAILED && astate[a] != CANCELLED && CAS_GUARD(a) ->
          /* property: a recorded outcome never changes (nothing is written over a terminal job) */
          assert(terminal == OPEN);
          terminal = J_SUCCEEDED; completedBy = a; result = a; version++;
          astate[a] = SUCCEEDED;
          FIRST_OUTCOME
       :: else ->
          raced[a] = true;
          if
          :: astate[a] == RUNNING || astate[a] == UNKNOWN -> astate[a] = LOST
          :: else -> skip
          fi
       fi
    fi;
    /* property: every result either won or is logged as a loss (a race_events row) */
    assert((astate[a] == SUCCEEDED && completedBy == a) || raced[a])
  }
}

/* src/db/attempts.ts settleAttemptWithoutResult: WHERE state IN ('starting','running','unknown') */
inline settleWithoutResult(a, to) {
  atomic {
    if
    :: IN_FLIGHT(a) -> astate[a] = to
    :: else -> skip
    fi
  }
}

/*
 * src/db/attempts.ts settleAbandonedAttempt: the workflow stopped waiting for a call (timeout,
 * cancel, crash). `running` may have taken effect: `unknown`. `starting` never sent anything:
 * `failed`, or `cancelled` when the job has ended.
 */
inline abandonAttempt(a) {
  atomic {
    if
    :: astate[a] == RUNNING -> astate[a] = UNKNOWN
    :: astate[a] == STARTING && terminal == OPEN -> astate[a] = FAILED
    :: astate[a] == STARTING && terminal != OPEN -> astate[a] = CANCELLED
    :: else -> skip
    fi
  }
}

/* src/db/jobs.ts finishJobWithoutResult: WHERE id = $1 AND terminal_status IS NULL */
inline finishJob(status) {
  atomic {
    if
    :: terminal == OPEN -> terminal = status; version++; FIRST_OUTCOME
    :: else -> skip
    fi
  }
}

/* A database activity: the statement may commit and its worker die before it reports; the
 * activity then runs again (retries are unlimited for database steps). */
#define AGAIN_AFTER_CRASH(step) \
  if \
  :: workerCrashes > 0 -> workerCrashes--; step \
  :: true -> skip \
  fi

/* ================= the provider-call activity ================= */

/*
 * src/activities/providerCall.ts callProvider: one call, never retried. It keeps running after
 * the workflow stopped waiting for it (the attempt timed out, the job was cancelled, a hedge
 * won), and settles what it brings back through the same path: a late answer.
 */
proctype ProviderCall(byte a) {
  byte answer;
  bool began;
  /* src/db/attempts.ts beginProviderCall: starting → running only while the job is open */
  atomic {
    if
    :: astate[a] == STARTING && terminal == OPEN -> astate[a] = RUNNING; began = true
    :: astate[a] == STARTING && terminal != OPEN -> astate[a] = CANCELLED
    :: else -> skip
    fi
  }
  if
  :: !began -> goto report
  :: else -> skip
  fi;
  /* the request leaves (src/providers/provider.ts: one HTTP call, maxRetries 0), and what the
     provider does with it (the simulator's faults: fail_before, drop_after, answer_with, hang) */
  atomic {
    /* property: no fallback runs after a side effect (no earlier attempt did the work) */
    assert(!sideEffects || !(did[1] || did[2] || did[3]));
    if
    :: did[a] = true; answer = A_OK
    :: answer = A_DEFINITE
    :: answer = A_DROP
    :: did[a] = true; answer = A_DROP
    :: did[a] = true; broken[a] = true; answer = A_BROKEN
    :: workerCrashes > 0 -> answer = 0
    fi
  }
  if
  :: answer != 0 -> skip
  :: answer == 0 ->
     /* the worker dies mid-call: no answer ever comes back to us; the provider may still do
        the work until the late-result window has passed */
     workerCrashes--;
     if
     :: did[a] = true
     :: did[a] = true; broken[a] = true
     :: skip
     fi;
     windowOver[a] = true;
     goto dead
  fi;
  /* src/db/attempts.ts markCallEnded: from now on the original request cannot land */
  callEnded[a] = true;
  if
  :: answer == A_OK -> recordResult(a)   /* src/service/results.ts recordResult */
  :: answer == A_DEFINITE -> settleWithoutResult(a, FAILED)
  :: answer == A_DROP ->
#ifdef BUG_UNKNOWN_AS_FAILED
     settleWithoutResult(a, FAILED)
#else
     /* ambiguous: failed only when nothing has side effects (the call has ended) */
     if
     :: sideEffects -> settleWithoutResult(a, UNKNOWN)
     :: else -> settleWithoutResult(a, FAILED)
     fi
#endif
  :: answer == A_BROKEN ->
     /* an answer outside the contract: the effect may have happened */
     if
     :: sideEffects -> settleWithoutResult(a, UNKNOWN)
     :: else -> settleWithoutResult(a, FAILED)
     fi
  fi;
report:
  replied[a] = true;
dead:
  answer = 0; began = false
}

/* ================= the job workflow ================= */

/*
 * src/workflows/jobWorkflow.ts reconcile → src/activities/attempts.ts reconcileAttempt: an
 * unknown attempt is looked up at the provider. A record settles it through recordResult; a
 * record that breaks the contract needs an operator; "no record" is believed only after the
 * call is over, and only when said twice (noteNotFound, migration 0006).
 */
inline lookupStatus(u) {
  /* the attempt row (call_ended_at), then the provider's answer: once the call is over the
     record cannot change, so reading both in one step loses no outcome */
  d_step { over = CALL_OVER(u); record = HAS_RECORD(u); bad = broken[u] }
  if
  :: astate[u] != UNKNOWN -> skip
  :: else ->
     if
     :: record && !bad -> recordResult(u)
     :: record && bad -> waitsOnOperator = true
     :: !record ->
#ifdef BUG_NOT_FOUND_ONCE
        settleWithoutResult(u, FAILED)
#else
        atomic {
          if
          :: over && astate[u] == UNKNOWN ->
             notFound[u]++;
             if
             :: notFound[u] >= 2 -> astate[u] = FAILED
             :: else -> skip
             fi
          :: else -> skip
          fi
        }
#endif
     fi
  fi
}

/* Waits until reconciling can learn something: a settlement, the job's end, news at the
 * provider, the recheck of a first "no record"; or, in hedged mode, a user's request. */
#define RECONCILE_CAN_PROGRESS(u) \
  (astate[u] != UNKNOWN || terminal != OPEN || CALL_OVER(u) != over || HAS_RECORD(u) != record \
   || (notFound[u] == 1 && over) || (hedged && tryAgain))

inline reconcile(u) {
  lookupStatus(u);
  if
  :: waitsOnOperator && astate[u] == UNKNOWN && terminal == OPEN ->
     /* src/workflows/jobWorkflow.ts reconcile: needsOperator. Only an operator moves it on. */
end_waitsOnOperator:
     (astate[u] != UNKNOWN || terminal != OPEN);
     waitsOnOperator = false
  :: else ->
     RECONCILE_CAN_PROGRESS(u)
  fi;
  d_step { u = 0; over = false; record = false; bad = false }
}

/* src/workflows/jobWorkflow.ts runAttempt → src/activities/attempts.ts startAttempt (for
 * attempt 1: admitJob, just after admission, in the same local activity) →
 * src/db/attempts.ts createAttempt: INSERT ... WHERE the job is open, ON CONFLICT (job_id, seq)
 * DO NOTHING; the partial unique index refuses a second exclusive attempt in flight. Attempt 1
 * written right after admission is one of the interleavings modelled here, where other steps
 * may also come between the two. */
#define ANOTHER_IN_FLIGHT(a) \
  ((a != 1 && IN_FLIGHT(1)) || (a != 2 && IN_FLIGHT(2)) || (a != 3 && IN_FLIGHT(3)))
#ifdef BUG_NO_IN_FLIGHT_GUARD
#define OTHER_IN_FLIGHT(a) false
#else
#define OTHER_IN_FLIGHT(a) (!hedged && ANOTHER_IN_FLIGHT(a))
#endif

inline createAttempt(a) {
  atomic {
    if
    :: astate[a] != NONE -> skip                      /* the same (job, seq) again: that row */
    :: astate[a] == NONE && terminal != OPEN -> skip  /* jobNotOpen */
    :: astate[a] == NONE && terminal == OPEN && OTHER_IN_FLIGHT(a) ->
       /* property: the loop never asks for an attempt the in-flight index refuses */
       assert(false)
    :: astate[a] == NONE && terminal == OPEN && !OTHER_IN_FLIGHT(a) ->
       /* property: no new exclusive attempt while another is starting, running or unknown */
       assert(hedged || !ANOTHER_IN_FLIGHT(a));
       astate[a] = STARTING; readVersion[a] = version
    fi
  }
}

inline launch() {
  createAttempt(next);
  AGAIN_AFTER_CRASH(createAttempt(next));
  if
  :: astate[next] == STARTING ->
     waiting[next] = true; running++;
     run ProviderCall(next)
  :: else -> skip       /* the job ended first (src/workflows/jobWorkflow.ts: job.end) */
  fi;
  next++
}

/* One call the workflow waits for: its report, or the activity's timeout (start-to-close or
 * heartbeat; a timer, so it may fire at any moment before the report). */
#define WATCH(a) \
  :: waiting[a] && replied[a] -> waiting[a] = false; running-- \
  :: waiting[a] && !replied[a] -> \
     abandonAttempt(a); AGAIN_AFTER_CRASH(abandonAttempt(a)); waiting[a] = false; running--

/* the first unknown attempt, 0 if none */
#define ANY_UNKNOWN \
  (astate[1] == UNKNOWN -> 1 : (astate[2] == UNKNOWN -> 2 : (astate[3] == UNKNOWN -> 3 : 0)))
#ifdef BUG_NO_IN_FLIGHT_GUARD
#define BLOCKING_UNKNOWN 0
#else
#define BLOCKING_UNKNOWN ANY_UNKNOWN
#endif

proctype JobWorkflow() {
  byte next = 1;               /* the next provider of the plan */
  byte running;                /* calls the workflow waits for */
  bool waiting[MAXA + 1];
  byte u;                      /* an unknown attempt */
  bool over, record, bad;      /* what the last status lookup saw */

  /* src/activities/admission.ts admitJob (idempotent). A create after admission is a replay
     answered from the job row alone: it writes nothing and commutes with every other step, so
     the model has every create happen before admission (a reduction by hand, as SPIN's partial
     order reduction cannot see it). */
  atomic {
    createsLeft == 0; admitted = true;
    /* nothing reads these after admission: forget them, so states differ only in what matters */
    apiCrashes = 0; jobIntent = 1
  };
  AGAIN_AFTER_CRASH(admitted = true);

  do
  :: terminal != OPEN -> break
  /* src/workflows/jobWorkflow.ts runAttempt: the call reports, or its timeout fires and the
     attempt is abandoned (abandonAttempt) */
  WATCH(1)
  WATCH(2)
  WATCH(3)
  /* src/workflows/jobWorkflow.ts runExclusive: one attempt at a time; an unknown one blocks
     everything after it */
  :: terminal == OPEN && !hedged && running == 0 ->
     u = BLOCKING_UNKNOWN;
     if
     :: u != 0 -> reconcile(u)
     :: u == 0 && next <= NP -> launch()
     :: u == 0 && next > NP ->
        /* src/workflows/jobWorkflow.ts runJob: every provider failed */
        finishJob(J_FAILED); AGAIN_AFTER_CRASH(finishJob(J_FAILED))
     fi
  :: terminal == OPEN && !hedged && tryAgain ->
     /* src/workflows/policy.ts chooseNextAttempt: refused while an attempt is in flight or
        blocking; otherwise the loop's next attempt serves it */
     tryAgain = false
  /* src/workflows/jobWorkflow.ts runHedged: after a delay of silence (a timer) or on a
     user's request, the next one starts too; the first compare-and-swap wins */
  :: terminal == OPEN && hedged && running == 0 && next <= NP -> launch()
  :: terminal == OPEN && hedged && running > 0 && next <= NP -> launch()
  :: terminal == OPEN && hedged && tryAgain && next <= NP -> tryAgain = false; launch()
  :: terminal == OPEN && hedged && tryAgain && next > NP ->
     tryAgain = false      /* refused: the plan is spent */
  :: terminal == OPEN && hedged && running == 0 && next > NP ->
     u = ANY_UNKNOWN;
     if
     :: u != 0 -> reconcile(u)
     :: else -> finishJob(J_FAILED); AGAIN_AFTER_CRASH(finishJob(J_FAILED))
     fi
  od;
  /* The job ended (a winner, every provider failed, an operator's cancel): stop waiting for
     the calls still out; each is abandoned and its answer, if any, comes late and loses. */
  do
  /* src/workflows/jobWorkflow.ts runHedged: the losers' scopes are cancelled (abandonAttempt) */
  WATCH(1)
  WATCH(2)
  WATCH(3)
  :: running == 0 -> break
  od
}

/* ================= outside the workflow ================= */

/*
 * src/api/routes/jobs.ts POST /v1/jobs → src/service/jobs.ts createJob →
 * src/db/jobs.ts insertJobOrFindExisting (INSERT ... ON CONFLICT (owner_id, idempotency_key)
 * DO NOTHING, then the row), then ensureJobWorkflow (its id derived from owner and key).
 */
proctype Client(byte intent) {
  atomic {
    createsLeft--;
    if
    :: jobsForKey == 0 -> jobsForKey++; jobIntent = intent
    :: else -> skip
    fi;
    /* property: at most one job per (owner, key) */
    assert(jobsForKey == 1);
    if
    :: jobIntent != intent ->
       skip   /* 409: the key was used with another intent (IdempotencyKeyReuseError) */
    :: jobIntent == intent && apiCrashes > 0 ->
       apiCrashes--       /* the API dies between its insert and the workflow's start */
    :: jobIntent == intent ->
       /* created, or not yet admitted: start the workflow; Temporal refuses a second start */
       if
       :: !admitted && !workflowStarted -> workflowStarted = true; run JobWorkflow()
       :: else -> skip
       fi
    fi
  }
}

/* src/service/sweeper.ts sweepJobs: a job row whose workflow never started gets one. */
active proctype Sweeper() {
end:
  do
  :: atomic { jobsForKey == 1 && jobIntent != 0 && !workflowStarted ->
       workflowStarted = true; run JobWorkflow() }
  od
}

/*
 * An operator, telling the truth from the provider's ledger:
 * src/service/attempts.ts resolveAttempt (through the workflow's update, or
 * resolveAfterWorkflowClosed): `succeeded` goes through recordResult; `failed` only when the
 * provider has no record and the call can no longer land. cancelJob: finishJobWithoutResult.
 */
#ifdef NO_OPERATOR
proctype Operator() {
#else
active proctype Operator() {
#endif
  byte u;
  bool resolved, cancelled;
end:
  do
  :: !resolved && ANY_UNKNOWN != 0 ->
     u = ANY_UNKNOWN;
     resolved = true;
     if
     :: did[u] -> recordResult(u)
     :: !did[u] && CALL_OVER(u) -> settleWithoutResult(u, FAILED)
     :: else -> skip     /* the call could still land: not now */
     fi;
     u = 0
  :: !cancelled && terminal == OPEN && jobsForKey == 1 ->
     cancelled = true;
     finishJob(J_CANCELLED)
  od
}

/* src/service/attempts.ts acceptProviderCallback: a signed webhook from the provider about one
 * attempt, possibly long after its call: a result goes through recordResult; a failure only
 * when the provider did nothing and will not. */
#ifdef NO_CALLBACK
proctype Callback() {
#else
active proctype Callback() {
#endif
  byte a;
end:
  atomic {
    if
    :: did[1] && !broken[1] -> a = 1
    :: did[2] && !broken[2] -> a = 2
    :: did[3] && !broken[3] -> a = 3
    fi;
    recordResult(a);
    a = 0
  }
}

/* src/api/routes/jobs.ts POST /v1/jobs/:id/attempts: a user asks for another attempt. In
 * exclusive mode it changes nothing the loop would not do (refused while an attempt is in
 * flight, else served by the next attempt), so only hedged jobs get one. */
proctype User() {
end:
  do
  :: atomic { !tryAgain && workflowStarted && terminal == OPEN -> tryAgain = true }
     break
  od
}

init {
  atomic {
#if JOB == 1
    sideEffects = true; hedged = false;      /* a charge: exclusive, side effects */
#elif JOB == 2
    sideEffects = false; hedged = false;     /* a summary, one provider at a time */
#elif JOB == 3
    sideEffects = false; hedged = true;      /* a summary, hedged */
#else
    if
    :: sideEffects = true; hedged = false
    :: sideEffects = false; hedged = false
    :: sideEffects = false; hedged = true
    fi;
#endif
    run Client(1);
    run Client(1);
    run Client(2);
    if
    :: hedged -> run User()
    :: else -> skip
    fi
  }
}

/* ================= properties ================= */

#define AT_MOST_ONE_JOB   (jobsForKey <= 1)
#define AT_MOST_ONE_WINNER \
  ((astate[1] == SUCCEEDED) + (astate[2] == SUCCEEDED) + (astate[3] == SUCCEEDED) <= 1 \
   && (completedBy == 0 || astate[completedBy] == SUCCEEDED) \
   && (terminal == J_SUCCEEDED) == (completedBy != 0) && result == completedBy)
#define NO_DOUBLE_EFFECT \
  (!sideEffects || (did[1] + did[2] + did[3] <= 1))
#define FAILED_MEANS_NOTHING_DONE \
  (!sideEffects || ((astate[1] != FAILED || !did[1]) && (astate[2] != FAILED || !did[2]) \
                    && (astate[3] != FAILED || !did[3])))
#define OUTCOME_STABLE \
  (firstTerminal == OPEN || (terminal == firstTerminal && result == firstResult))

/*
 * Invariants of every reachable state: the monitor can step in at any moment, so SPIN tries it
 * in every state. Each assert's comment names the property a counterexample breaks.
 */
active proctype Invariants() {
end:
  atomic {
    !(AT_MOST_ONE_JOB && AT_MOST_ONE_WINNER && NO_DOUBLE_EFFECT && FAILED_MEANS_NOTHING_DONE
      && OUTCOME_STABLE) ->
    /* property: at most one job per (owner, key) */
    assert(AT_MOST_ONE_JOB);
    /* property: at most one winner, and it is the job's recorded result */
    assert(AT_MOST_ONE_WINNER);
    /* property: a job with side effects has them at most once (no double charge) */
    assert(NO_DOUBLE_EFFECT);
    /* property: a failed attempt of a job with side effects did nothing (never failed by a clock) */
    assert(FAILED_MEANS_NOTHING_DONE);
    /* property: a recorded outcome never changes */
    assert(OUTCOME_STABLE)
  }
}

/* Under weak fairness: once started, the job ends or waits on an operator; it never spins. */
ltl settles {
  [] (workflowStarted -> <> (terminal != OPEN || waitsOnOperator))
}
