/*
 * onejob's job/attempt protocol, for SPIN.
 *
 * One (owner, key) and the jobs it names: clients creating it (twice with one intent, once
 * with another), the API's insert-or-find and workflow start, the workflow's admission and
 * attempt loop in exclusive or hedged mode, provider calls that answer, fail, break the
 * contract, drop after doing the work, time out and answer late, status lookups, an operator,
 * a provider callback, and crashes: of the API between its insert and its start, and of the
 * worker in the middle of a call or right after a database step (whose activity then runs
 * again).
 *
 * Bounds (exhaustive within them): 3 clients (2 with intent 1, 1 with intent 2), 3 providers in
 * the plan and so at most 3 attempts per job, 1 worker crash, 1 API crash, 1 operator resolve and
 * 1 operator cancel, 1 provider callback, 1 "try again"; with RELEASE, 1 release and 1 create
 * after it. The mode (exclusive or hedged) and whether the job has side effects are chosen at
 * the start; hedged jobs have none (the API refuses hedging with side effects). CAP (at most 3)
 * is the job's attempt cap: 3 with RETRIES or BREAKER, else the plan's length, unless a run sets
 * it. An exclusive job's attempt never sent is tried again on its provider, with retries or
 * without, while the cap has room; so with RETRIES, BREAKER or a cap above the plan's length an
 * attempt and the plan's provider it calls are numbered apart (a provider may get several
 * attempts, or none for a while). With DUPLICATE_EXECUTIONS, 1 second execution of one call;
 * with TERMINATE, 1 terminate, and the new run after it.
 *
 * Parts that only some runs pay for, each a define:
 *   -DQUIRKY_PROVIDERS        a provider's record under our key is independent of its work: it
 *                             files the charge under its own id ("no record" for ever), answers
 *                             "pending" (a 2xx outside the contract, kept on the attempt as
 *                             evidence of work), or registers our key only when first asked
 *   -DCONTRADICTORY_CALLBACK  the one callback may be a signed "failed" report, true, or sent
 *                             while the call is out and then contradicted by its own 2xx
 *   -DRELEASE                 once the job has ended, an operator may release its key (once);
 *                             a later create then makes generation 2, a job with its own
 *                             workflow, attempts and provider keys; the sweeper goes on
 *                             reconciling unknown attempts of ended jobs
 *   -DADMISSION_TWICE         admission writes attempt 1 itself, and may run again (its worker
 *                             died before the workflow task completed)
 *   -DRETRIES                 providers with retries: an exclusive job's attempt whose own call
 *                             failed in a way that may heal (refused before any work: 429, 503;
 *                             free of side effects, a dropped connection) is tried again on the
 *                             same provider as a new attempt, while the cap leaves one attempt
 *                             for each provider not yet tried (as a call never sent is, on any
 *                             provider); and a provider may refuse the request itself (a 400),
 *                             which it then refuses whenever it is sent
 *   -DBREAKER                 a provider's circuit breaker (or a cooldown), opened and closed by
 *                             other jobs' calls at any moment: creating an attempt on an open
 *                             provider is refused, the plan passes it by and comes back to it
 *                             on a durable timer when nothing else is left (exclusive jobs)
 *   -DDUPLICATE_EXECUTIONS    Temporal runs an activity at least once: one attempt's provider call
 *                             is executed a second time (once), at any moment after the first was
 *                             scheduled: the run was reset and now waits for the new execution, or
 *                             the task was delivered twice and nobody waits for the second; either
 *                             may run alongside the first or after it, even after the run closed.
 *                             The begin hands the call to the one execution that moves the attempt
 *                             from `starting` to `running`
 *   -DTERMINATE               an operator terminates the job's run (once) while the job is open: it
 *                             stops without running any more code, its calls go on as zombies, and
 *                             a new run (the sweeper, or a backend calling startJob) admits the job
 *                             again and takes over what the closed run left (adoptAttempts); the
 *                             operator's cancel may then find no workflow and end the row itself;
 *                             the sweeper settles what an ending left in flight and looks at unknown
 *                             attempts of ended jobs
 *   -DREPLAY                  the provider looks lost answers up by replay (issue 59): an unknown
 *                             attempt is looked at by sending its first request again, byte for
 *                             byte, under its key. The provider keeps a key for a bounded time
 *                             (its key window): inside it, the same request answers the stored
 *                             outcome of the first (or, if the first never reached it, does the
 *                             work once now); after it, the key is forgotten and the same request
 *                             is a new charge. The window closes at a moment of its own; PostgreSQL
 *                             lets a replay begin only before it (less a margin), for an unknown
 *                             attempt of an open job (migration 0025). After the window, the status
 *                             lookup settles it, as without replays. A failure report (an
 *                             operator's, a signed callback's), given inside the window or after
 *                             it, is held while a replay of the attempt may still land
 *                             (replay_lands_by, migration 0025): the replay's answer then wins, or
 *                             the held report applies at the next look
 * and -DNO_OPERATOR, -DNO_RESOLVE (the operator cancels and releases, but resolves nothing),
 * -DNO_CALLBACK, to keep a run within its memory. -DCONSEQUENCES_ONLY compiles out the asserts
 * at the steps (STEP_ASSERT, beside the guards they back), leaving the Invariants monitor and
 * SPIN's end-state check: each planted mistake must be caught by what it leads to as well.
 * Attempts are numbered by slot: generation g's attempt s (1..NP) is slot (g - 1) * MAXA + s,
 * so slots 4..6 are generation 2's.
 *
 * Each SQL statement is one atomic step, as PostgreSQL's row locks make it; a transaction that
 * holds its rows is one step too (recordAttemptResultIn, admission). A trigger runs in the step
 * of the statement that fires it: every ending of a job settles what it left in flight
 * (migration 0018). An HTTP call to a provider, a status lookup and a workflow's wait are
 * separate steps, so anything may happen between them.
 *
 * What the model takes from Temporal: one open run per workflow id; timers fire, at any moment
 * the run waits; an activity's report reaches the run only if that run still waits for that
 * execution; database activities run until they succeed. It does not take that an activity runs
 * once, or only while its run is open (DUPLICATE_EXECUTIONS, TERMINATE).
 *
 * What the design rests on, and so what the model's providers do:
 *   - Work never leaves us with neither an answer nor a record. A provider that did the work
 *     for a call whose answer never reached us (the connection dropped, our worker died
 *     mid-call) has a record under our key by the time it is first asked: at once, or
 *     registered when that first lookup comes. A provider that files the work under its own id,
 *     or answers "pending", tells us in a 2xx that reaches us. A provider that did the work,
 *     never answered and keeps no record under our key cannot be told apart from one that did
 *     nothing: two "no record"s fail the attempt and a fallback may charge again. No protocol
 *     can settle that case safely; it is excluded, not handled.
 *   - A signed "failed" report is true (the provider did nothing for that attempt and will
 *     not), except in the one order the model explores: sent while the call is still out, then
 *     contradicted by that call's own 2xx, which reaches us.
 *   - The late-result window: once it has passed, a request that lost its worker does nothing.
 *
 * Mistakes the model found in the code, fixed since: a 2xx outside the contract was written apart
 * from its call's end, and an admission run again on a job cancelled meanwhile left its attempt 1
 * `starting` for ever (each is now a planted mistake below); with TERMINATE, a new run did not
 * retry an attempt never sent, whether its own admission had made it so (the fallback's row
 * written, its run terminated before the call) or its closed run had (terminated after it chose
 * to retry and before it noted that). Fixed in 4cc0e4a; the runs with terminate and a cap above
 * the plan's length, or retries, hold (docs/protocol.md says more). With REPLAY, an operator's
 * "failed" inside the key window stood over a replay that did the work as the first request under
 * the key; fixed in 4e2520f (the report is held while a replay may land), now a planted mistake.
 * Then a replay that did the work and lost its answer lifted that hold, and the held report
 * failed an attempt that charged (HOLD_LIFTED_BY_LOST_ANSWER); fixed in 604f74e (the hold stays
 * while a replay's work is in doubt, and PostgreSQL refuses a machine's `failed` then), now the
 * planted mistake BUG_DOUBT_IGNORED. Open: a doubt raised by a replay that did nothing outlives the
 * key window, and without an operator the look retries for ever (DOUBT_OUTLIVES_KEY_WINDOW).
 *
 * Every step names the code that implements it: FILE function.
 *
 * Planted mistakes (each must produce a counterexample, through the mistake's own lines, with
 * and without CONSEQUENCES_ONLY; test/protocolModel.test.ts checks):
 *   -DBUG_NO_VERSION_CHECK     the compare-and-swap forgets `version = $2`
 *   -DBUG_UNKNOWN_AS_FAILED    an ambiguous failure of a call counts as failed, side effects or not
 *   -DBUG_NOT_FOUND_ONCE       one "no record" from a status lookup is believed, call over or not
 *   -DBUG_NO_IN_FLIGHT_GUARD   the exclusive loop starts the next attempt past an unknown one, and
 *                              the unique index attempts_one_in_flight_per_job is missing
 *   -DBUG_NOT_FOUND_OUTRANKS_2XX  "no record" twice fails an attempt whose provider answered a
 *                              2xx, and the CHECK that would refuse it is dropped
 *                              (QUIRKY_PROVIDERS)
 *   -DBUG_FAILED_CALLBACK_AT_ONCE a signed "failed" report fails the attempt at once, while its
 *                              call is still out (CONTRADICTORY_CALLBACK)
 *   -DBUG_RELEASE_WHILE_UNKNOWN  the key release ignores attempts that may still take effect
 *                              (RELEASE)
 *   -DBUG_ADMISSION_FAILS_ITS_OWN_ATTEMPT  admission run again takes its own attempt 1 for an
 *                              orphan and fails it (ADMISSION_TWICE)
 *   -DBUG_CALL_END_APART       a 2xx outside the contract is written in two statements, the
 *                              call's end and then the `unknown` settle that keeps the 2xx: a
 *                              held "failed" report, or two "no record"s, between them (or a
 *                              worker lost between them) fail an attempt that did the work
 *                              (CONTRADICTORY_CALLBACK)
 *   -DBUG_ADMISSION_SKIPS_ENDED_JOB  admission run again on a job cancelled meanwhile takes
 *                              over nothing, so its attempt 1 stays `starting` for ever: never
 *                              sent, never settled, its key never releasable (ADMISSION_TWICE)
 *   -DBUG_RETRY_AFTER_AMBIGUOUS  the retry table read before the certainty table: a dropped
 *                              connection (a failure that may heal) is retried on the same
 *                              provider, its attempt failed to make way, side effects or not
 *                              (RETRIES)
 *   -DBUG_RETRY_REJECTED       a definite 400 taken for a failure that may heal: the same request
 *                              is sent again to the provider that refused it (RETRIES)
 *   -DBUG_SKIPPED_AS_TRIED     a provider the plan passed by for its open breaker counts as
 *                              tried: the job fails while it waits out its cool-off (BREAKER)
 *   -DBUG_BEGIN_RETURNS_NOTHING  an execution that did not win the begin and finds the attempt
 *                              `running` (another execution's call is out) ends the call and writes
 *                              `failed` over it, as the code did when the begin returned no job
 *                              (DUPLICATE_EXECUTIONS)
 *   -DBUG_NEVER_SENT_FINAL     an attempt abandoned before its call began (never_sent) is failed
 *                              for good: it is not retried (a cap above the plan's length)
 *   -DBUG_ENDING_LEAVES_ATTEMPTS  an ending written while no workflow runs the job (a cancel of a
 *                              closed run, a late answer after a terminate) leaves its `starting`
 *                              and `running` attempts as they were: no trigger settles them, and
 *                              the sweeper does not either (TERMINATE)
 *   -DBUG_REPLAY_AFTER_WINDOW  a replay begins without the key window's check (the trigger
 *                              attempt_replays_inside_key_window without its clock): a look after
 *                              the window re-sends the request, which the provider, having
 *                              forgotten the key, takes for a new charge (REPLAY)
 *   -DBUG_REPORT_DURING_REPLAY  a failure report settles while a replay of its attempt may still
 *                              land (REPORT_SETTLES without NO_REPLAY_MAY_LAND): the replay, the
 *                              first request under the key, does the work and its 2xx loses the
 *                              compare-and-swap to the `failed` (REPLAY)
 */

/* An assert at the step it checks, beside the guard it backs. -DCONSEQUENCES_ONLY compiles them
   out, so that a planted mistake must be caught by what it leads to: the Invariants monitor's
   properties, SPIN's end-state check, or the claim (test/protocolModel.test.ts). */
#ifdef CONSEQUENCES_ONLY
#define STEP_ASSERT(c) skip
#else
#define STEP_ASSERT(c) assert(c)
#endif

#ifndef NP
#define NP 3                 /* providers in the plan = attempts per job at most (1..3) */
#endif
#define MAXA 3               /* room for one job's attempts in the arrays below */
/* The job's attempt cap (ONEJOB_MAX_ATTEMPTS_PER_JOB): a retry on the same provider is made only
   while it leaves room for each provider of the plan not yet tried. Unless a run says otherwise,
   it is 3 with RETRIES or BREAKER, else the plan's length: then no retry has room (an attempt
   never sent is retried whatever its provider's retries, and each retry multiplies the states,
   so only the runs that ask for it pay for it). */
#ifndef CAP
#if defined(RETRIES) || defined(BREAKER)
#define CAP MAXA
#else
#define CAP NP
#endif
#endif
#if CAP > MAXA || CAP < NP
#error "the cap is between the plan's providers and MAXA"
#endif

#ifdef RELEASE
#define GENS 2               /* the key's jobs: generation 1, and the one after its release */
#else
#define GENS 1
#endif
#define SLOTS (GENS * MAXA)
#if GENS == 2
#define BASE(g)    ((g - 1) * MAXA)      /* generation g's attempt s is slot BASE(g) + s */
#define JOB_OF(a)  ((a - 1) / MAXA + 1)  /* the generation an attempt slot belongs to */
#else
#define BASE(g)    0
#define JOB_OF(a)  1
#endif

#if defined(QUIRKY_PROVIDERS) || defined(CONTRADICTORY_CALLBACK)
#define EVIDENCE_OF_WORK     /* attempts keep success_answered_at (migration 0010) */
#endif
#if defined(CONTRADICTORY_CALLBACK) || defined(REPLAY)
#define HELD_REPORTS         /* a failure report may be held on the attempt row (reported_failure) */
#endif
#if defined(RELEASE) || defined(ADMISSION_TWICE)
#define WORKFLOW_END_SEEN    /* a ghost marks each workflow's end */
#endif
/* An exclusive job's attempt never sent is tried again on its provider, whatever the provider's
   own retries, while the cap has room (src/workflows/retryPolicy.ts retryAfterFailure): a retry may
   happen wherever the cap is above the plan's length, or with RETRIES or BREAKER. */
#if defined(RETRIES) || defined(BREAKER) || (CAP > NP && (!defined(JOB) || JOB != 3))
#define PLAN_APART           /* attempts and the plan's providers are numbered apart */
#if defined(RELEASE) || defined(ADMISSION_TWICE)
#error "retries (RETRIES, BREAKER, a cap above the plan's length) are modelled with one generation and admission once"
#endif
#endif
#if defined(BREAKER) && (!defined(JOB) || JOB == 3)
#error "BREAKER is modelled for exclusive jobs (JOB 1 or 2)"
#endif
#if defined(DUPLICATE_EXECUTIONS) || defined(TERMINATE)
#define EXECUTIONS           /* a call may have several executions: the run waits for one of them */
#if defined(RELEASE)
#error "DUPLICATE_EXECUTIONS and TERMINATE are modelled with one generation"
#endif
#endif
#if defined(TERMINATE) && defined(BREAKER)
#error "TERMINATE and BREAKER are not modelled together"
#endif
#if defined(ADMISSION_TWICE) || defined(TERMINATE)
#define ADOPTS               /* a run's admission takes over what an earlier run left */
#endif
#if defined(ADMISSION_TWICE) && defined(TERMINATE)
#error "TERMINATE's new run is its admission run again: ADMISSION_TWICE is not needed with it"
#endif
#if defined(RELEASE) || defined(TERMINATE)
#define SWEEPER_LOOKS        /* the sweeper looks at unknown attempts of ended jobs */
#endif
#if defined(REPLAY) && (!defined(JOB) || JOB != 1)
#error "REPLAY is modelled for a charge (JOB 1): only a provider with side effects is replayed"
#endif
#if defined(REPLAY) && (defined(QUIRKY_PROVIDERS) || defined(CONTRADICTORY_CALLBACK) \
                        || defined(RELEASE) || defined(RETRIES) || defined(BREAKER) \
                        || defined(DUPLICATE_EXECUTIONS) || defined(TERMINATE) \
                        || defined(ADMISSION_TWICE) || defined(PLAN_APART))
#error "REPLAY is modelled with the providers of the basic runs, one run and one generation"
#endif

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
#define A_BROKEN    4        /* did the work, answered a 2xx outside the contract */
#define A_LOST      5        /* our worker died mid-call: no answer ever reaches us */
#define A_REJECTED  6        /* (RETRIES) refused the request itself (a 400): nothing done, and
                                the same request is refused the same way whenever it is sent */

/* a provider's signed "failed" report about one attempt */
#define R_TRUE         1     /* it did nothing for that attempt, and will not */
#define R_CONTRADICTED 2     /* sent while the call was out; the call then answers a 2xx */

/* what a provider-call activity reported to the run waiting for it */
#define RETURNED 1           /* an outcome: the attempt as its call left it */
#define THREW    2           /* (EXECUTIONS) CallBegunElsewhere: another execution began the call */

/* ---- PostgreSQL: the jobs rows of this (owner, key), by generation ---- */
byte jobsForKey;             /* rows with this (owner_id, idempotency_key): one per generation */
byte jobIntent;              /* request_fingerprint of generation 1's row: 1 or 2 */
bool admitted[GENS + 1];     /* admitted_at IS NOT NULL */
byte terminal[GENS + 1];     /* terminal_status */
byte completedBy[GENS + 1];  /* completed_by: an attempt slot, 0 = NULL */
byte result[GENS + 1];       /* result: whose payload it is, 0 = NULL */
byte version[GENS + 1];      /* version */
bool hedged;                 /* mode */
bool sideEffects;            /* the job type or a provider has side effects */
#ifdef RELEASE
bool released;               /* generation 1's key_release IS NOT NULL */
#endif

/* ---- PostgreSQL: attempts rows, by slot ---- */
byte astate[SLOTS + 1];
byte readVersion[SLOTS + 1];
bool callEnded[SLOTS + 1];     /* call_ended_at IS NOT NULL */
byte notFound[SLOTS + 1];      /* "no record" answers counted after the call was over */
bool raced[SLOTS + 1];         /* a race_events row names it as the loser */
#ifdef EVIDENCE_OF_WORK
bool answered[SLOTS + 1];      /* success_answered_at: a 2xx from a provider with side effects */
#endif
#ifdef HELD_REPORTS
byte reported[SLOTS + 1];      /* reported_failure IS NOT NULL (and, as a ghost, whether true) */
#endif
#ifdef RELEASE
bool startedAt[SLOTS + 1];     /* started_at IS NOT NULL: the call began */
#endif

/* ---- the providers' own ledgers (what really happened) ---- */
bool did[SLOTS + 1];           /* the provider did the work for this attempt */
bool broken[SLOTS + 1];        /* ... and its status lookup (and callback) breaks the contract */
bool windowOver[SLOTS + 1];    /* the late-result window of a call that lost its worker passed */
#ifdef QUIRKY_PROVIDERS
bool keyed[SLOTS + 1];         /* it has a record under our idempotency key */
bool keyWhenAsked[SLOTS + 1];  /* it did the work, and registers our key at the first lookup */
#endif
#ifdef CONTRADICTORY_CALLBACK
byte ans[SLOTS + 1];           /* its answer to the call, once chosen (0: not yet) */
#endif
#ifdef REPLAY
bool refusedKey[SLOTS + 1];    /* it refused the request under our key before any work, and keeps
                                  that refusal as the key's stored outcome */
bool keyGone[SLOTS + 1];       /* the key window is over: PostgreSQL's replay_until has passed and
                                  the provider has forgotten the key */
bool replaying[SLOTS + 1];     /* a replay of this attempt has begun and not yet reached it */
bool doubt[SLOTS + 1];         /* attempts.replay_effect_unknown: the last replay's answer was lost
                                  while the attempt was unknown; it may have done the work */
bool again[SLOTS + 1];         /* ghost: the work done a second time under this attempt's key */
bool lateSend;                 /* ghost: a request under some attempt's key reached the provider
                                  after its key window */
#endif

#ifdef PLAN_APART
byte provOf[SLOTS + 1];        /* attempts.provider: the plan's provider an attempt called */
bool retriable[SLOTS + 1];     /* attempts.error: its provider is tried again for this failure:
                                  never_sent, or (RETRIES) its own call failed in a way that may
                                  heal */
#endif
#ifdef RETRIES
bool refuses[MAXA + 1];        /* a provider refused this request itself (a 400) */
bool futile;                   /* ghost: a request was sent again to a provider that refused it */
#endif
#ifdef BREAKER
bool open[MAXA + 1];           /* provider_health: its breaker is open (or it cools down) */
byte breakerOpens = 1;         /* budget */
#endif

/* ---- Temporal ---- */
bool workflowStarted[GENS + 1]; /* one workflow id per (owner, key, generation) */
#ifdef EXECUTIONS
byte replied[SLOTS + 1];       /* what the execution the run waits for reported: 0, RETURNED, THREW */
byte execs[SLOTS + 1];         /* executions of the attempt's provider call started so far */
byte listen[SLOTS + 1];        /* the execution the current run waits for (0: none, its run closed
                                  or stopped waiting), numbered in the order they started */
#else
bool replied[SLOTS + 1];       /* the provider-call activity reported back to the workflow */
#endif
#ifdef DUPLICATE_EXECUTIONS
byte secondExecutions = 1;     /* budget */
#endif
#ifdef TERMINATE
byte terminations = 1;         /* budget */
bool runClosed[GENS + 1];      /* the job's run was terminated, and no new run has started yet */
#endif
bool tryAgain;               /* a user's "try again" waiting for the loop */
byte workerCrashes = 1;      /* budgets */
byte apiCrashes = 1;
byte createsLeft = 3;        /* creates not yet sent */

/* ---- ghosts, for properties and for the reductions by hand ---- */
bool waitsOnOperator[GENS + 1]; /* generation g's workflow waits in reconcile for an operator */
byte firstTerminal[GENS + 1]; /* the first terminal status and result ever written */
byte firstResult[GENS + 1];
bool tried[SLOTS + 1];         /* the workflow ran this attempt's provider call (PLAN_APART:
                                  a call to this provider of the plan) */
#ifdef PLAN_APART
bool sent[SLOTS + 1];          /* a request left for this provider of the plan (a call began) */
#endif
#ifdef WORKFLOW_END_SEEN
bool wfDone[GENS + 1];       /* generation g's workflow has ended */
#endif
#ifdef RELEASE
bool callDone[SLOTS + 1];      /* this attempt's provider-call activity has ended */
bool releaseBlind;           /* generation 1's key was released while some of its work was not
                                on record, or some of its work came after the release */
bool gen1Final;              /* at the release, nothing of generation 1 could still take effect */
#endif

#define CALL_OVER(a)   (callEnded[a] || windowOver[a])
#define IN_FLIGHT(a)   (astate[a] == STARTING || astate[a] == RUNNING || astate[a] == UNKNOWN)
#ifdef QUIRKY_PROVIDERS
#define HAS_RECORD(a)  (keyed[a])
#define KEY_RECORD(a)  keyed[a] = true
#else
#define HAS_RECORD(a)  (did[a])
#define KEY_RECORD(a)  skip
#endif
/* the first slot (1..SLOTS) where P holds, 0 if none */
#if GENS == 2
#define FIRST_OF(P) \
  (P(1) -> 1 : (P(2) -> 2 : (P(3) -> 3 : (P(4) -> 4 : (P(5) -> 5 : (P(6) -> 6 : 0))))))
#else
#define FIRST_OF(P) (P(1) -> 1 : (P(2) -> 2 : (P(3) -> 3 : 0)))
#endif
#define IS_UNKNOWN(a)  (astate[a] == UNKNOWN)
#define ANY_DID(b)     (did[b + 1] || did[b + 2] || did[b + 3])

/* ================= database steps ================= */

/* ghost: the first outcome ever written, to check that it never changes */
#define FIRST_OUTCOME(j) \
  if \
  :: firstTerminal[j] == OPEN -> firstTerminal[j] = terminal[j]; firstResult[j] = result[j] \
  :: else -> skip \
  fi

/*
 * Migration 0018: the trigger jobs_settle_attempts_on_end runs settle_attempts_of_ended_job in the
 * transaction that ends a job, whoever writes the ending: an attempt still `starting` can never be
 * sent (a begin needs an open job), so it is `cancelled`; one `running` may still take effect, so
 * it is `unknown` (looked at like any unknown); the winner of a compare-and-swap is left alone.
 * The trigger cannot see an attempt whose INSERT has not committed (the INSERT saw the job open,
 * and its key-share lock on the job row does not hold back an UPDATE of the job's status): where a
 * run's admission takes over what was left (ADOPTS), the model lets the trigger miss any
 * `starting` attempt, and the sweeper (src/db/attemptSettlement.ts settleAttemptsLeftByEndings) or an
 * admission run again settles it later.
 */
#ifdef ADOPTS
#define MISSED_INSERT(k) :: astate[k] == STARTING -> skip
#else
#define MISSED_INSERT(k)
#endif
#define SETTLE_LEFT(k) \
  if \
  :: astate[k] == STARTING -> astate[k] = CANCELLED \
  MISSED_INSERT(k) \
  :: astate[k] == RUNNING && completedBy[JOB_OF(k)] != k -> astate[k] = UNKNOWN \
  :: else -> skip \
  fi
#define SETTLE_JOB(j) SETTLE_LEFT(BASE(j) + 1); SETTLE_LEFT(BASE(j) + 2); SETTLE_LEFT(BASE(j) + 3)
#ifdef BUG_ENDING_LEAVES_ATTEMPTS
/* the code before migration 0018: only a workflow settled what it left in flight (abandoning its
   calls, or adopting them at admission), so an ending written while no run is open left them */
#define SETTLE_ENDING(j) \
  if \
  :: !runClosed[j] -> SETTLE_JOB(j) \
  :: runClosed[j] -> skip \
  fi
#else
#define SETTLE_ENDING(j) SETTLE_JOB(j)
#endif

#ifdef BUG_NO_VERSION_CHECK
#define CAS_GUARD(a)  (completedBy[JOB_OF(a)] == 0)
#else
#define CAS_GUARD(a)  (version[JOB_OF(a)] == readVersion[a] && completedBy[JOB_OF(a)] == 0)
#endif

/*
 * src/db/compareAndSwap.ts recordAttemptResultIn: the only writer of a job's result.
 *   UPDATE jobs SET result, completed_by, terminal_status = 'succeeded', version = version + 1
 *    WHERE id = $1 AND version = $2 AND completed_by IS NULL
 * Zero rows: a race_events row (ON CONFLICT DO NOTHING) and the attempt `lost` (a `failed` or
 * `cancelled` one keeps its state). Repeating it reports the earlier outcome. The trigger
 * jobs_guard_outcome is left out: the properties must hold on the statement alone.
 */
inline recordResult(a) {
  atomic {
    if
    :: astate[a] == SUCCEEDED || astate[a] == LOST -> skip
    :: astate[a] == RUNNING || astate[a] == UNKNOWN || astate[a] == FAILED || astate[a] == CANCELLED ->
       if
       :: astate[a] != FAILED && astate[a] != CANCELLED && CAS_GUARD(a) ->
          /* property: a recorded outcome never changes (nothing is written over a terminal job) */
          STEP_ASSERT(terminal[JOB_OF(a)] == OPEN);
          terminal[JOB_OF(a)] = J_SUCCEEDED; completedBy[JOB_OF(a)] = a; result[JOB_OF(a)] = a;
          version[JOB_OF(a)]++;
          astate[a] = SUCCEEDED;
          FIRST_OUTCOME(JOB_OF(a));
          /* src/db/compareAndSwap.ts recordAttemptResultIn: the UPDATE that ends the job fires
             the trigger jobs_settle_attempts_on_end (migration 0018) */
          SETTLE_ENDING(JOB_OF(a))
       :: else ->
          raced[a] = true;
          if
          :: astate[a] == RUNNING || astate[a] == UNKNOWN -> astate[a] = LOST
          :: else -> skip
          fi
       fi
    fi;
    /* property: every result either won or is logged as a loss (a race_events row) */
    STEP_ASSERT((astate[a] == SUCCEEDED && completedBy[JOB_OF(a)] == a) || raced[a])
  }
}

/*
 * Migration 0010's CHECK attempts_success_answer_is_not_failed_by_machine: PostgreSQL refuses
 * a statement that would make `failed` an attempt whose provider answered a 2xx (only an
 * operator's verdict may); the statement fails, and its activity tries again later. The code's
 * rule (src/domain/certainty.ts failureVerdict) decides on the attempt row as it read it before
 * asking the provider; a 2xx written after that read is refused here. With a call's end and
 * its 2xx in one step (all runs) nothing reaches it; with BUG_CALL_END_APART something can.
 */
#if defined(EVIDENCE_OF_WORK) && !defined(BUG_NOT_FOUND_OUTRANKS_2XX)
#define CHECK_2XX_ALLOWS_FAILED(a) (!answered[a])
#else
#define CHECK_2XX_ALLOWS_FAILED(a) true
#endif
/* REPLAY: migration 0025's CHECK attempts_replay_in_doubt_is_not_failed_by_machine refuses a
 * machine's `failed` (any error code but 'operator') while a replay's work is in doubt
 * (replay_effect_unknown). BUG_DOUBT_IGNORED drops it with the rule (noReplayInDoubt). */
#if defined(REPLAY) && !defined(BUG_DOUBT_IGNORED)
#define CHECK_ALLOWS_FAILED(a) (CHECK_2XX_ALLOWS_FAILED(a) && !doubt[a])
#else
#define CHECK_ALLOWS_FAILED(a) CHECK_2XX_ALLOWS_FAILED(a)
#endif

#define SETTLE_ALLOWED(a, to) (to != FAILED || CHECK_ALLOWS_FAILED(a))

/* no 2xx kept on the row (success_answered_at IS NULL) */
#ifdef EVIDENCE_OF_WORK
#define NO_2XX_KEPT(a) (!answered[a])
#else
#define NO_2XX_KEPT(a) true
#endif

/* src/db/attemptReplays.ts NO_REPLAY_MAY_LAND (REPLAY): no replay of the attempt may still land,
 * attempts.replay_lands_by being unset or past (migration 0025). A replay's begin sets it, under
 * the attempt's row lock, and its answer clears it: in the model, a replay begun and not yet at
 * the provider (`replaying`, set by the begin; the arrival, the reply and its record are one step).
 * A failure report's settle reads it in the same statement, so the two serialize on the row.
 * BUG_REPORT_DURING_REPLAY: the rule before the fix, which asks only whether the call is over. */
#ifdef REPLAY
#ifdef BUG_REPORT_DURING_REPLAY
#define NO_REPLAY_MAY_LAND(a) CALL_OVER(a)
#else
#define NO_REPLAY_MAY_LAND(a) (!replaying[a])
#endif
#else
#define NO_REPLAY_MAY_LAND(a) true
#endif

/* src/db/attemptReplays.ts noReplayInDoubt (REPLAY), in REPORT_SETTLES and HELD_REPORT_SETTLES:
 * the last replay's answer told what the key did (attempts.replay_effect_unknown unset). A replay
 * whose answer was lost may have done the work as the first request under the key; a held report
 * waits until a later replay tells. An operator's new "failed" (`op`), true of the ledger when
 * given, still settles. BUG_DOUBT_IGNORED: the rule (and the CHECK) before 604f74e. */
#if defined(REPLAY) && !defined(BUG_DOUBT_IGNORED)
#define NO_REPLAY_IN_DOUBT(a, op) (op || !doubt[a])
#else
#define NO_REPLAY_IN_DOUBT(a, op) true
#endif

/* src/db/attemptSettlement.ts settleAttemptWithoutResult (HELD_REPORT_SETTLES): a call that ends
 * `unknown` while a "failed" report is held, with no 2xx and no replay that may still land, is
 * `failed` by it. */
#ifdef HELD_REPORTS
#define HELD_REPORT_SETTLES(a) (reported[a] != 0 && NO_2XX_KEPT(a) && NO_REPLAY_MAY_LAND(a) \
                                && NO_REPLAY_IN_DOUBT(a, false))
#else
#define HELD_REPORT_SETTLES(a) false
#endif

/* src/db/attemptSettlement.ts settleAttemptWithoutResult: WHERE state IN ('starting','running','unknown') */
inline settleWithoutResult(a, to) {
  atomic {
    if
    :: IN_FLIGHT(a) && to == UNKNOWN && HELD_REPORT_SETTLES(a) -> astate[a] = FAILED
    :: IN_FLIGHT(a) && !(to == UNKNOWN && HELD_REPORT_SETTLES(a)) && SETTLE_ALLOWED(a, to) ->
       astate[a] = to
    :: else -> skip
    fi
  }
}

/* src/db/attemptSettlement.ts settleAttemptWithoutResult (successAnswered): a 2xx outside the contract
 * from a provider with side effects: `unknown`, and the 2xx is kept (success_answered_at). A
 * held report never settles it. */
inline settleAfter2xx(a) {
  atomic {
    if
    :: IN_FLIGHT(a) ->
       astate[a] = UNKNOWN;
#ifdef EVIDENCE_OF_WORK
       answered[a] = true
#else
       skip
#endif
    :: else -> skip
    fi
  }
}

/*
 * src/db/attemptSettlement.ts settleAbandonedAttempt: the workflow stopped waiting for a call (timeout,
 * cancel, crash). `running` may have taken effect: `unknown`. `starting` never sent anything:
 * `failed`, or `cancelled` when the job has ended.
 */
inline abandonAttempt(a) {
  atomic {
    if
    :: astate[a] == RUNNING -> astate[a] = UNKNOWN
    :: astate[a] == STARTING && terminal[JOB_OF(a)] == OPEN -> astate[a] = FAILED
    :: astate[a] == STARTING && terminal[JOB_OF(a)] != OPEN -> astate[a] = CANCELLED
    :: else -> skip
    fi
  }
}

/* Whether an abandoned attempt is one its provider is tried again for (PLAN_APART: a retry may
 * have room): one abandoned while still `starting` on an open job never sent anything
 * (never_sent); it was not tried, so it is tried again on its provider whatever that provider's
 * own retries (`retry: false` in the runs without RETRIES), while the job's cap has room.
 * BUG_NEVER_SENT_FINAL: the code before issue 54's fix, whose retry table did not know
 * never_sent: the attempt is failed for good, and the plan moves on. */
#ifdef PLAN_APART
#ifdef BUG_NEVER_SENT_FINAL
#define NEVER_SENT_RETRIED(a) retriable[a] = false
#else
#define NEVER_SENT_RETRIED(a) \
  if \
  :: astate[a] == STARTING && terminal[JOB_OF(a)] == OPEN -> retriable[a] = true \
  :: else -> skip \
  fi
#endif
#else
#define NEVER_SENT_RETRIED(a) skip
#endif

/*
 * src/workflows/runAttempt.ts runAttempt: a run that stops waiting for a call (its timeout fired,
 * or the activity failed: CallBegunElsewhere) abandons its attempt (src/activities/attempts.ts
 * abandonAttempt); so does a new run's admission, for what its closed run left (adoptAttempts).
 */
inline abandonCall(k) {
  atomic {
    /* src/workflows/retryPolicy.ts retryAfterFailure: a call that never began is tried again on its
       provider, whatever the provider's own retries */
    NEVER_SENT_RETRIED(k);
    abandonAttempt(k)
  }
}

/* src/db/endedJobs.ts finishJobWithoutResult: WHERE id = $1 AND terminal_status IS NULL */
inline finishJob(j, status) {
  atomic {
    if
    :: terminal[j] == OPEN -> terminal[j] = status; version[j]++; FIRST_OUTCOME(j);
       /* src/db/endedJobs.ts finishJobWithoutResult: the UPDATE fires the trigger
          jobs_settle_attempts_on_end (migration 0018) */
       SETTLE_ENDING(j)
    :: else -> skip
    fi
  }
}

/*
 * src/db/attemptFailureReports.ts reportAttemptFailure: a "failed" report (a signed callback's, an
 * operator's) is kept on the row (reported_failure); it settles the attempt `failed` only when the
 * call can no longer answer (REPORT_SETTLES: it never began, it ended, or its late-result window
 * is over), no 2xx came and (REPLAY) no replay of the attempt may still land. Otherwise the
 * call's own end applies it (HELD_REPORT_SETTLES), or a later look.
 */
#ifdef BUG_FAILED_CALLBACK_AT_ONCE
#define REPORT_SETTLES(k) (NO_2XX_KEPT(k))
#else
#define REPORT_SETTLES(k) (NO_2XX_KEPT(k) && CALL_OVER(k))
#endif
inline applyReport(k, op) {
  if
  :: IN_FLIGHT(k) && REPORT_SETTLES(k) ->
     /* src/db/attemptReplays.ts NO_REPLAY_MAY_LAND, in REPORT_SETTLES: held while a replay of the
        attempt may still land, which would do the work as the first request under its key */
     if
     :: NO_REPLAY_MAY_LAND(k) ->
        /* src/db/attemptReplays.ts noReplayInDoubt, in REPORT_SETTLES: held while a replay whose
           answer was lost may have done the work; an operator's new word settles (op) */
        if
        :: NO_REPLAY_IN_DOUBT(k, op) -> astate[k] = FAILED
        :: else -> skip
        fi
     :: else -> skip
     fi
  :: else -> skip
  fi
}

/* A database activity: the statement may commit and its worker die before it reports; the
 * activity then runs again (retries are unlimited for database steps). */
#define AGAIN_AFTER_CRASH(step) \
  if \
  :: atomic { workerCrashes > 0 -> workerCrashes-- }; step \
  :: true -> skip \
  fi

/* ================= the provider-call activity ================= */

/* What a provider may still do with a call, given a signed "failed" report about it: a true
 * report rules the work out; a contradicted one rules everything out but a 2xx that reaches us. */
#ifdef CONTRADICTORY_CALLBACK
#define ANSWER        ans[a]
#define MAY_WORK(a)   (reported[a] != R_TRUE)
#define MAY_IDLE(a)   (reported[a] != R_CONTRADICTED)
#define MAY_HIDE(a)   (reported[a] == 0)
#else
#define ANSWER        answer
#define MAY_WORK(a)   true
#define MAY_IDLE(a)   true
#define MAY_HIDE(a)   true
#endif

/* ghost: generation 1 did work after its key was released */
#ifdef RELEASE
#define NOTE_WORK_AFTER_RELEASE(a) \
  if \
  :: did[a] && released && JOB_OF(a) == 1 -> releaseBlind = true \
  :: else -> skip \
  fi
#define NOTE_STARTED(a) startedAt[a] = true
#define CALL_DONE(a) callDone[a] = true
#else
#define CALL_DONE(a) skip
#define NOTE_WORK_AFTER_RELEASE(a) skip
#define NOTE_STARTED(a) skip
#endif

/* What the activity reports reaches the run only if that run still waits for this execution
 * (EXECUTIONS: an execution the run no longer waits for reports to nobody). */
#ifdef EXECUTIONS
#define EXECUTION ; byte e
#define REPORT_BACK(v) if :: listen[a] == e -> replied[a] = (v) :: else -> skip fi
#else
#define EXECUTION
#define REPORT_BACK(v) replied[a] = v
#endif
/* the activity reports back to the workflow (its locals are reset: the process is done) */
#define REPLY d_step { REPORT_BACK(RETURNED); CALL_DONE(a); ANSWER = 0; began = false }

/* A request left for the plan's provider of this attempt (PLAN_APART: for a property) */
#ifdef PLAN_APART
#define NOTE_SENT(a) sent[provOf[a]] = true
#else
#define NOTE_SENT(a) skip
#endif

/* An execution that did not begin the call: the attempt was settled, or (EXECUTIONS) another
 * execution began it and its call is out. BUG_BEGIN_RETURNS_NOTHING: the code before migration
 * 0018, whose begin returned no job when it changed nothing, so the call was taken for one with no
 * contract: its end was written and the attempt `failed` ("nothing was sent") over the live call. */
#ifdef BUG_BEGIN_RETURNS_NOTHING
#define LOST_BEGIN \
  d_step { \
    if \
    :: astate[a] == RUNNING -> callEnded[a] = true; \
       if :: SETTLE_ALLOWED(a, FAILED) -> astate[a] = FAILED :: else -> skip fi \
    :: else -> skip \
    fi; \
    REPORT_BACK(RETURNED); CALL_DONE(a) \
  }
#elif defined(EXECUTIONS)
#define LOST_BEGIN d_step { REPORT_BACK(astate[a] == RUNNING -> THREW : RETURNED); CALL_DONE(a) }
#else
#define LOST_BEGIN d_step { REPORT_BACK(RETURNED); CALL_DONE(a) }
#endif

/* The provider an attempt called, whether it refuses the request, and the failure's record */
#ifdef PLAN_APART
#define PROV_OF(a)    provOf[a]
#else
#define PROV_OF(a)    a
#endif
#ifdef RETRIES
#define REFUSES(a)    refuses[provOf[a]]
#define MAY_HEAL(a)   retriable[a] = true
#else
#define REFUSES(a)    false
#define MAY_HEAL(a)   skip
#endif

/* REPLAY: a request refused before any work is the key's stored outcome, which a replay inside
 * the window answers again (a request that never reached the provider, or that it dropped before
 * any work, leaves nothing stored: a replay is then the first request under the key) */
#ifdef REPLAY
#define NOTE_REFUSAL(a) ; refusedKey[a] = true
#else
#define NOTE_REFUSAL(a)
#endif

/* What an ambiguous end of a call may have done (BUG_UNKNOWN_AS_FAILED: nothing, ever) */
#ifdef BUG_UNKNOWN_AS_FAILED
#define MAY_HAVE_TAKEN_EFFECT false
#else
#define MAY_HAVE_TAKEN_EFFECT sideEffects
#endif

/* src/db/attemptSettlement.ts endCallWithoutResult writes a call's end and what it makes of the
 * attempt in one transaction. The runs without REPLAY take them as two steps (more interleavings
 * than the code has, and they hold); with REPLAY they are one, as in the code: a report given
 * once the call is over must not be found between them, held for a replay that has since been
 * answered. */
#ifdef REPLAY
#define END_WITH_SETTLE_BEGIN atomic {
#define END_WITH_SETTLE_END }
#else
#define END_WITH_SETTLE_BEGIN
#define END_WITH_SETTLE_END
#endif

/*
 * src/activities/providerCall.ts callProvider: one call, never retried. It keeps running after
 * the workflow stopped waiting for it (the attempt timed out, the job was cancelled, a hedge
 * won), and settles what it brings back through the same path: a late answer.
 */
proctype ProviderCall(byte a EXECUTION) {
#ifndef CONTRADICTORY_CALLBACK
  byte answer;
#endif
  bool began;
  /* src/db/attemptCalls.ts beginProviderCallOfJob: starting → running only while the job is open,
     in one statement: the one execution that makes this change draws the call's token, and it
     alone sends the call and writes what it came to (a test-and-set on `starting`) */
  atomic {
    if
    :: astate[a] == STARTING && terminal[JOB_OF(a)] == OPEN ->
       astate[a] = RUNNING; began = true; NOTE_STARTED(a); NOTE_SENT(a)
    :: astate[a] == STARTING && terminal[JOB_OF(a)] != OPEN -> astate[a] = CANCELLED
    :: else -> skip
    fi
  }
  if
  /* src/activities/providerCallBegin.ts beginCall: without the token nothing is sent and nothing is
     written; a settled attempt is reported as it is, a `running` one is another execution's call
     (CallBegunElsewhere: the run waiting for this execution abandons the attempt) */
  :: !began -> LOST_BEGIN
  :: else ->
     /* the request leaves (src/providers/provider.ts: one HTTP call, maxRetries 0), and what the
        provider does with it (the simulator's faults: fail_before, drop_after, answer_with, hang,
        files_under_own_id, register_after_status_lookup) */
     atomic {
       /* property: no fallback runs after a side effect (no earlier attempt did the work) */
       STEP_ASSERT(!sideEffects || !ANY_DID(BASE(JOB_OF(a))));
#ifdef RETRIES
       /* property: a request is never sent again to a provider that refused it (no retry of a 400) */
       STEP_ASSERT(!REFUSES(a));
       futile = futile || REFUSES(a);
       if
       :: REFUSES(a) -> ANSWER = A_REJECTED   /* the same request, refused the same way */
       :: else ->
#endif
       if
       :: MAY_WORK(a) -> did[a] = true; KEY_RECORD(a); ANSWER = A_OK
       :: MAY_IDLE(a) -> ANSWER = A_DEFINITE NOTE_REFUSAL(a)
       :: MAY_IDLE(a) -> ANSWER = A_DROP
       :: MAY_WORK(a) -> did[a] = true; broken[a] = true; KEY_RECORD(a); ANSWER = A_BROKEN
       /* work whose answer is lost always leaves a record under our key (the header's
          assumption): at once, or (QUIRKY_PROVIDERS) registered when first asked */
       :: MAY_HIDE(a) -> did[a] = true; KEY_RECORD(a); ANSWER = A_DROP
#ifdef QUIRKY_PROVIDERS
       :: MAY_HIDE(a) -> did[a] = true; keyWhenAsked[a] = true; ANSWER = A_DROP
       /* files the work under its own id and answers with it, or "pending": no record, ever */
       :: MAY_WORK(a) -> did[a] = true; ANSWER = A_BROKEN
       /* answers "pending", and registers our key when first asked */
       :: MAY_WORK(a) -> did[a] = true; keyWhenAsked[a] = true; ANSWER = A_BROKEN
#endif
       :: workerCrashes > 0 && MAY_IDLE(a) -> workerCrashes--; ANSWER = A_LOST
#ifdef RETRIES
       /* refuses the request itself (400, 422): nothing done, and it would refuse it again */
       :: MAY_IDLE(a) -> refuses[provOf[a]] = true; ANSWER = A_REJECTED
#endif
       fi
#ifdef RETRIES
       fi
#endif
       ;
       NOTE_WORK_AFTER_RELEASE(a)
     };
     /* src/activities/providerCall.ts callProvider: the worker died mid-call, so no answer
        ever comes back to us; the provider may still do the work until the late-result window
        has passed, and then has a record under our key (the header's assumption) */
     if
     :: ANSWER == A_LOST ->
        atomic {
          if
          :: MAY_HIDE(a) -> did[a] = true; KEY_RECORD(a)
#ifdef QUIRKY_PROVIDERS
          :: MAY_HIDE(a) -> did[a] = true; keyWhenAsked[a] = true
#endif
          :: MAY_HIDE(a) -> did[a] = true; broken[a] = true; KEY_RECORD(a)
          :: skip
          fi;
          NOTE_WORK_AFTER_RELEASE(a)
        };
        d_step { windowOver[a] = true; CALL_DONE(a); ANSWER = 0; began = false }
     /* src/service/results.ts recordResult → src/db/compareAndSwap.ts recordAttemptResult:
        the call's end (markCallEnded) is written in the compare-and-swap's own transaction */
     :: ANSWER == A_OK ->
        atomic { callEnded[a] = true; recordResult(a) };
        REPLY   /* src/activities/providerCall.ts callProvider returns */
     /* a 2xx outside the contract: the effect may have happened, and the 2xx is kept.
        src/db/attemptCalls.ts markCallEnded, then settleAttemptWithoutResult (successAnswered):
        src/db/attemptSettlement.ts endCallWithoutResult: one transaction (BUG_CALL_END_APART: two) */
     :: ANSWER == A_BROKEN && sideEffects ->
#ifdef BUG_CALL_END_APART
        callEnded[a] = true;
        if
        :: atomic { workerCrashes > 0 -> workerCrashes-- };   /* the worker dies in between */
           d_step { CALL_DONE(a); ANSWER = 0; began = false }
        :: true -> settleAfter2xx(a); REPLY   /* src/activities/providerCall.ts callProvider */
        fi
#else
        atomic { callEnded[a] = true; settleAfter2xx(a) };
        REPLY   /* src/activities/providerCall.ts callProvider returns */
#endif
     /* src/db/attemptCalls.ts markCallEnded: from now on the original request cannot land */
     :: (ANSWER == A_DEFINITE || ANSWER == A_DROP || ANSWER == A_REJECTED
         || (ANSWER == A_BROKEN && !sideEffects)) ->
        END_WITH_SETTLE_BEGIN callEnded[a] = true;
        if
        :: ANSWER == A_DEFINITE ->
           /* src/domain/retries.ts retryVerdict: refused before any work (429, 503): may heal */
           atomic { MAY_HEAL(a); settleWithoutResult(a, FAILED) }
        :: ANSWER == A_DROP ->
           /* src/activities/providerCallSettlement.ts settleCall: ambiguous, so failed only when nothing
              has side effects (the call has ended); then a dropped connection may heal */
           if
           :: !MAY_HAVE_TAKEN_EFFECT -> atomic { MAY_HEAL(a); settleWithoutResult(a, FAILED) }
#ifdef BUG_RETRY_AFTER_AMBIGUOUS
           /* src/workflows/retryPolicy.ts retryAfterFailure: the connection dropped, which may heal,
              so the attempt is failed to make way for its retry, side effects or not */
           :: else -> atomic { MAY_HEAL(a); settleWithoutResult(a, FAILED) }
#else
           :: else -> settleWithoutResult(a, UNKNOWN)
#endif
           fi
        :: ANSWER == A_BROKEN -> settleWithoutResult(a, FAILED)   /* and no side effects */
#ifdef RETRIES
        :: ANSWER == A_REJECTED ->
#ifdef BUG_RETRY_REJECTED
           /* src/domain/retries.ts retryVerdict: a 400 taken for a failure that may heal */
           atomic { MAY_HEAL(a); settleWithoutResult(a, FAILED) }
#else
           /* src/domain/retries.ts retryVerdict: the same request would fail the same way */
           settleWithoutResult(a, FAILED)
#endif
#endif
        fi END_WITH_SETTLE_END;
        REPLY   /* src/activities/providerCall.ts callProvider returns */
     fi
  fi
}

/* ================= reconciling an unknown attempt ================= */

/* what the status lookup's provider does when asked: registers our key (QUIRKY_PROVIDERS) */
#ifdef QUIRKY_PROVIDERS
#define ASKED(u) \
  if \
  :: keyWhenAsked[u] -> keyed[u] = true; keyWhenAsked[u] = false \
  :: else -> skip \
  fi
#else
#define ASKED(u) skip
#endif

/* evidence on the attempt row: a 2xx was answered; a held report and a 2xx */
#if defined(EVIDENCE_OF_WORK) && !defined(BUG_NOT_FOUND_OUTRANKS_2XX)
#define SAW_2XX(u) (answered[u])
#else
#define SAW_2XX(u) false
#endif
#ifdef CONTRADICTORY_CALLBACK
#define HELD_WITH_2XX(u) (reported[u] != 0 && answered[u])
#else
#define HELD_WITH_2XX(u) false
#endif

/* (Steps that only some runs have are macros, not #ifdef blocks inside an inline: SPIN keeps no
 * line numbers from the preprocessor inside an inline's body, and a trail must name its lines.) */
#ifdef HELD_REPORTS
#define APPLY_HELD_REPORT(u) \
  atomic { \
    if \
    :: astate[u] == UNKNOWN && reported[u] != 0 && NO_2XX_KEPT(u) -> applyReport(u, false) \
    :: else -> skip \
    fi \
  };
#else
#define APPLY_HELD_REPORT(u)
#endif

/* "no record": counted once the call is over; believed when said twice (the grace apart) */
#ifdef BUG_NOT_FOUND_ONCE
#define NOT_FOUND(u) \
  atomic { \
    if \
    :: IN_FLIGHT(u) && CHECK_ALLOWS_FAILED(u) -> astate[u] = FAILED \
    :: else -> skip \
    fi \
  }
#else
#define NOT_FOUND(u) \
  atomic { \
    if \
    :: over && astate[u] == UNKNOWN -> \
       notFound[u]++; \
       if \
       :: notFound[u] >= 2 && CHECK_ALLOWS_FAILED(u) -> astate[u] = FAILED \
       :: else -> skip \
       fi \
    :: else -> skip \
    fi \
  }
#endif

/*
 * REPLAY: a look by replay (src/activities/attemptLook.ts lookOnce → replayLook → byReplay),
 * before the status lookup, in three steps: PostgreSQL lets the replay begin or refuses it, the
 * request reaches the provider, and what came back settles the attempt or not.
 *
 * The begin (src/db/attemptReplays.ts beginReplay): the trigger attempt_replays_inside_key_window
 * (migration 0025) refuses it at or after replay_until = first_sent_at + keyWindow - margin on
 * PostgreSQL's clock, for an attempt that is not `unknown` and for an ended job. Refused, the look
 * goes on to the status lookup. BUG_REPLAY_AFTER_WINDOW: the trigger without its clock.
 */
#ifdef BUG_REPLAY_AFTER_WINDOW
#define REPLAY_ALLOWED(u) (astate[u] == UNKNOWN && terminal[JOB_OF(u)] == OPEN)
#else
#define REPLAY_ALLOWED(u) (astate[u] == UNKNOWN && terminal[JOB_OF(u)] == OPEN && !keyGone[u])
#endif
/* what a replay brought back (replyOf) */
#define RP_NO_NEWS  1        /* a 5xx, a dropped connection, a send given up: its answer lost */
#define RP_2XX      2        /* the stored 2xx, or the work done now by the first arrival under the key */
#define RP_BROKEN   3        /* the stored 2xx, outside the contract */
#define RP_REFUSED  4        /* a refusal in the provider's words: nothing done under the key */
#define RP_IN_PROGRESS 5     /* 409: nothing stored yet, the first request may still land */
/* A replay's answer is recorded with its verdict, and the trigger attempt_replays_answer_once
 * (migration 0025) keeps attempts.replay_effect_unknown: raised by a `no_news` answer (a 5xx, a
 * dropped connection, a send given up: the replay may have done the work) while the attempt is
 * unknown, cleared by one that tells (a stored 2xx, a refusal, a 409). */
#define NOTE_ANSWER(u) doubt[u] = (replyOf == RP_NO_NEWS && astate[u] == UNKNOWN)
#ifdef REPLAY
#define REPLAYED replayed
#define REPLAY_BEGIN(u) \
  atomic { \
    if \
    :: REPLAY_ALLOWED(u) -> replayed = true; replaying[u] = true \
    :: else -> skip \
    fi \
  };
/* The replay reaches the provider. Inside the key window it answers the key's stored outcome:
 * the 2xx of work done, or a refusal; with nothing stored, while the first request may still land,
 * it answers 409 (in progress); with nothing stored once it cannot, the replay is the first request
 * under the key, and the provider does with it what it may do with any. A reduction by hand: a
 * replay that reaches the provider before the first request (still on its way) is answered 409;
 * had the provider taken the replay first, the first would later have got the stored outcome,
 * which is the same as the first taken first with its answer late, and the model has that. After
 * the window the key is forgotten: the same request is a new one, and does the work again. The
 * window closes only when no replay begun inside it is on its way (the margin: KeyWindow). */
#define REPLAY_SEND(u) \
  if \
  :: replayed -> \
     atomic { \
       STEP_ASSERT(!keyGone[u]); \
       replaying[u] = false; \
       if \
       :: keyGone[u] -> lateSend = true; replyOf = RP_2XX; \
          if :: did[u] -> again[u] = true :: else -> did[u] = true fi \
       :: !keyGone[u] && did[u] -> replyOf = (broken[u] -> RP_BROKEN : RP_2XX) \
       :: !keyGone[u] && !did[u] && refusedKey[u] -> replyOf = RP_REFUSED \
       :: !keyGone[u] && !did[u] && !refusedKey[u] && !CALL_OVER(u) -> replyOf = RP_IN_PROGRESS \
       :: !keyGone[u] && !did[u] && !refusedKey[u] && CALL_OVER(u) -> \
          if \
          :: did[u] = true; replyOf = RP_2XX \
          :: refusedKey[u] = true; replyOf = RP_REFUSED \
          :: replyOf = RP_NO_NEWS \
          :: did[u] = true; replyOf = RP_NO_NEWS \
          fi \
       fi; \
       /* src/db/attemptReplays.ts answerReplay: the trigger attempt_replays_answer_once */ \
       NOTE_ANSWER(u) \
     } \
  :: else -> skip \
  fi;
/* A stored 2xx is recorded through the compare-and-swap; one outside the contract needs an
 * operator; a refusal fails the attempt (the certainty table: nothing was done under the key);
 * no news leaves it unknown, looked at again when something changes. */
#define REPLAY_SETTLE(u, needsOperator) \
  if \
  :: replyOf == RP_2XX -> recordResult(u) \
  :: replyOf == RP_BROKEN -> needsOperator = true \
  :: replyOf == RP_REFUSED -> \
     atomic { if :: astate[u] == UNKNOWN -> astate[u] = FAILED :: else -> skip fi } \
  :: else -> skip \
  fi;
#define REPLAY_FORGET replayed = false; replyOf = 0
/* news a look by replay waits for: the window closed since (the status lookup's turn) */
#define REPLAY_NEWS(u) || (replayed && keyGone[u])
#else
#define REPLAYED false
#define REPLAY_BEGIN(u)
#define REPLAY_SEND(u)
#define REPLAY_SETTLE(u, needsOperator)
#define REPLAY_FORGET skip
#define REPLAY_NEWS(u)
#endif

/*
 * src/workflows/reconcile.ts reconcile → src/activities/attempts.ts reconcileAttempt: an
 * unknown attempt is looked up at the provider. A held "failed" report comes first: after a 2xx
 * it needs an operator, else it settles the attempt once the call is over. A record settles it
 * through recordResult; a record that breaks the contract needs an operator. "No record" after
 * a 2xx proves nothing (src/domain/certainty.ts failureVerdict): it needs an operator. Without a
 * 2xx it is believed only after the call is over, and only when said twice (noteNoRecord,
 * migration 0006). `needsOperator` is set when only an operator can settle it.
 */
inline lookupStatus(u, needsOperator) {
  /* src/db/attemptFailureReports.ts reportAttemptFailure, with no new report: a held one settles it now if
     it may (CONTRADICTORY_CALLBACK, REPLAY) */
  APPLY_HELD_REPORT(u)
  /* src/db/attemptReplays.ts beginReplay: PostgreSQL lets a replay begin only inside the key window,
     for an unknown attempt of an open job (REPLAY; BUG_REPLAY_AFTER_WINDOW: window unchecked) */
  REPLAY_BEGIN(u)
  /* src/activities/replayLook.ts replayLook: the first request, byte for byte, under its key;
     property: no send of an attempt's key after its key window (a replay only inside it) */
  REPLAY_SEND(u)
  /* src/activities/replayLook.ts byReplay: what the replay found settles the attempt, or not */
  REPLAY_SETTLE(u, needsOperator)
  /* src/activities/attempts.ts reconcileAttempt: the attempt row (call_ended_at), then
     provider.lookupStatus: once the call is over the record changes only by being asked, so
     reading both in one step loses no outcome */
  d_step {
    over = CALL_OVER(u); record = HAS_RECORD(u); bad = broken[u];
    if
    :: astate[u] == UNKNOWN && !HELD_WITH_2XX(u) -> ASKED(u)
    :: else -> skip
    fi
  }
  if
  :: astate[u] != UNKNOWN || REPLAYED -> skip
  :: else ->
     if
     :: HELD_WITH_2XX(u) ->                        /* src/domain/certainty.ts failureVerdict */
        needsOperator = true
     :: !HELD_WITH_2XX(u) && record && !bad ->     /* src/service/results.ts recordResult */
        recordResult(u)
     :: !HELD_WITH_2XX(u) && record && bad ->      /* src/activities/attempts.ts reconcileAttempt */
        needsOperator = true
     :: !HELD_WITH_2XX(u) && !record && SAW_2XX(u) -> /* src/domain/certainty.ts failureVerdict */
        needsOperator = true
     :: !HELD_WITH_2XX(u) && !record && !SAW_2XX(u) -> /* src/domain/certainty.ts failureVerdict */
        NOT_FOUND(u)   /* src/db/callClock.ts noteNoRecord */
     fi
  fi
}

/* ================= the job workflow ================= */

/* this workflow's attempt s (`base`: the slot before its first attempt) */
#if GENS == 2
#define SLOT(s) (base + s)
#define JOB_BASE base
#else
#define SLOT(s) (s)
#define JOB_BASE 0
#endif

/* Waits until reconciling can learn something: a settlement, the job's end, news at the
 * provider, the recheck of a "no record" (or the retry of a settle the CHECK refused); or, in
 * hedged mode, a user's request. */
#define RECONCILE_CAN_PROGRESS(u) \
  (astate[u] != UNKNOWN || terminal[g] != OPEN || CALL_OVER(u) != over \
   || HAS_RECORD(u) != record || (notFound[u] >= 1 && over) || (hedged && tryAgain) \
   REPLAY_NEWS(u))

inline reconcile(u) {
  lookupStatus(u, waitsOnOperator[g]);
  if
  :: waitsOnOperator[g] && astate[u] == UNKNOWN && terminal[g] == OPEN ->
     /* src/workflows/reconcile.ts reconcile: needsOperator. Only an operator, or news at the
        provider, moves it on. */
end_waitsOnOperator:
     (astate[u] != UNKNOWN || terminal[g] != OPEN || HAS_RECORD(u) != record);
     waitsOnOperator[g] = false
  :: else ->
     RECONCILE_CAN_PROGRESS(u)
  fi;
  d_step { u = 0; over = false; record = false; bad = false; REPLAY_FORGET }
}

/* src/workflows/runAttempt.ts runAttempt → src/activities/attempts.ts startAttempt →
 * src/db/attempts.ts createAttempt: INSERT ... WHERE the job is open, ON CONFLICT (job_id, seq)
 * DO NOTHING; the partial unique index refuses a second exclusive attempt in flight. Without
 * ADMISSION_TWICE, attempt 1 written by admission (in the same local activity) is one of the
 * interleavings modelled here, where other steps may also come between the two. */
#define ANOTHER_IN_FLIGHT(a) \
  ((a != SLOT(1) && IN_FLIGHT(SLOT(1))) || (a != SLOT(2) && IN_FLIGHT(SLOT(2))) \
   || (a != SLOT(3) && IN_FLIGHT(SLOT(3))))
#ifdef BUG_NO_IN_FLIGHT_GUARD
#define OTHER_IN_FLIGHT(a) false
#else
#define OTHER_IN_FLIGHT(a) (!hedged && ANOTHER_IN_FLIGHT(a))
#endif

/* BREAKER: the INSERT refuses a provider whose breaker is open or which cools down (NOT EXISTS
 * in provider_health, in the same statement): ProviderUnavailableError, no row, no number. */
#ifdef BREAKER
#define UNAVAILABLE(p)   open[p]
#define PASSED_BY(b)     passedBy = b
#else
#define UNAVAILABLE(p)   false
#define PASSED_BY(b)     skip
#endif
#ifdef PLAN_APART
#define SET_PROV(a, p)   provOf[a] = p
#else
#define SET_PROV(a, p)   skip
#endif

inline createAttempt(a, p) {
  atomic {
    if
    :: astate[a] != NONE -> skip                      /* the same (job, seq) again: that row */
    :: astate[a] == NONE && terminal[g] != OPEN -> skip  /* jobNotOpen */
    :: astate[a] == NONE && terminal[g] == OPEN && UNAVAILABLE(p) -> PASSED_BY(true)
    :: astate[a] == NONE && terminal[g] == OPEN && !UNAVAILABLE(p) && OTHER_IN_FLIGHT(a) ->
       /* property: the loop never asks for an attempt the in-flight index refuses */
       STEP_ASSERT(false)
    :: astate[a] == NONE && terminal[g] == OPEN && !UNAVAILABLE(p) && !OTHER_IN_FLIGHT(a) ->
       /* property: no new exclusive attempt while another is starting, running or unknown */
       STEP_ASSERT(hedged || !ANOTHER_IN_FLIGHT(a));
       astate[a] = STARTING; readVersion[a] = version[g]; SET_PROV(a, p); PASSED_BY(false)
    fi
  }
}

/* src/workflows/runAttempt.ts runAttempt: the provider-call activity, and where the loop
 * stands after it: a provider passed by is deferred (job.deferred), not tried */
#ifdef BREAKER
#define WAS_PASSED_BY  passedBy
#define DEFER(p)       deferred[p] = true; passedBy = false
#else
#define WAS_PASSED_BY  false
#define DEFER(p)       skip
#endif
/*
 * src/workflows/exclusiveLoop.ts runThenJudge → src/workflows/retryPolicy.ts retryAfterFailure: once an
 * exclusive job's attempt is back, it is retried on its provider when it is `failed` and the job's
 * cap leaves one attempt for each provider of the plan not yet tried (deferred ones included),
 * for a failure its provider is tried again for: a call that never began (never_sent: abandoned
 * while `starting`), on any provider, with retries or without; with RETRIES, a failure of its own
 * call that may heal (src/domain/retries.ts retryVerdict). A provider's tries in a row are at most
 * the cap here (at most 3, the default retry.maxAttempts): its tries are never spent first.
 */
#ifdef PLAN_APART
#ifdef BREAKER
#define DEFERRED_COUNT (deferred[1] + deferred[2] + deferred[3])
#else
#define DEFERRED_COUNT 0
#endif
#define ROOM_FOR_RETRY ((next - 1) + 1 + (NP + 1 - prov) + DEFERRED_COUNT <= CAP)
#define JUDGE(s) \
  if \
  :: !hedged && terminal[g] == OPEN && astate[SLOT(s)] == FAILED && retriable[SLOT(s)] \
     && ROOM_FOR_RETRY -> \
     retryOf = provOf[SLOT(s)] \
  :: else -> skip \
  fi
#else
#define JUDGE(s) skip
#endif

/* The call's activity is scheduled: (EXECUTIONS) its next execution, the one this run waits for */
#ifdef EXECUTIONS
#define SCHEDULE_CALL(k) \
  execs[k]++; listen[k] = execs[k]; replied[k] = 0; run ProviderCall(k, execs[k])
#else
#define SCHEDULE_CALL(k) run ProviderCall(k)
#endif
/* TERMINATE: an operator terminates the run (once, while its job is open): it stops at once and
 * runs no more code; what it had scheduled goes on, and nobody waits for it any more */
#ifdef TERMINATE
#define MAY_TERMINATE (terminations > 0 && terminal[g] == OPEN)
#define CLOSE_RUN \
  terminations--; runClosed[g] = true; listen[SLOT(1)] = 0; listen[SLOT(2)] = 0; listen[SLOT(3)] = 0
#define TERMINATED_BEFORE_CALL \
  :: atomic { astate[SLOT(next)] == STARTING && MAY_TERMINATE -> CLOSE_RUN }; goto closed
#else
#define TERMINATED_BEFORE_CALL
#endif
inline launchOn(p) {
  createAttempt(SLOT(next), p);
  AGAIN_AFTER_CRASH(createAttempt(SLOT(next), p));
  if
  :: atomic {
       /* src/workflows/runAttempt.ts runAttempt: the row is written (or found: the same row
          again, or the attempt 1 admission reused), so its call is scheduled. It may be `running`
          already (TERMINATE): a closed run's call began it, and this execution's begin finds it so
          (CallBegunElsewhere) */
       astate[SLOT(next)] == STARTING || astate[SLOT(next)] == RUNNING ->
       waiting[next] = true; running++; tried[SLOT(p)] = true;
       SCHEDULE_CALL(SLOT(next));
       next++
     }
  :: atomic {
       /* the job ended first (jobNotOpen), or the row found was settled meanwhile: its call would
          send nothing and report the attempt as it is, which the run judges (a reduction by
          hand: the report is judged at once) */
       astate[SLOT(next)] != STARTING && astate[SLOT(next)] != RUNNING && !WAS_PASSED_BY ->
       next++; JUDGE(next - 1)
     }
  :: atomic {
       astate[SLOT(next)] != STARTING && astate[SLOT(next)] != RUNNING && WAS_PASSED_BY -> DEFER(p)
     }
  /* src/workflows/runAttempt.ts runAttempt: the attempt's row is written, and the run is
     terminated before the workflow task that schedules its call completes (TERMINATE) */
  TERMINATED_BEFORE_CALL
  fi
}

/* The plan's next provider: the attempt's own number, or (PLAN_APART) a place of its own */
#ifdef PLAN_APART
#define PLAN_LEFT  (prov <= NP)
inline launch() { launchOn(prov); prov++ }
#else
#define PLAN_LEFT  (next <= NP)
inline launch() { launchOn(next) }
#endif

/*
 * src/activities/admission.ts admitJob, with startFirstAttempt: it reads the job row, marks it
 * admitted (markJobAdmitted), takes over what an earlier run left (adoptAttempts), and writes
 * attempt 1 (createAttempt) unless the job had ended or has attempts. adoptAttempts: attempt 1
 * still `starting`, alone, on the primary and in this mode, of a job still open, is this
 * admission's own (an earlier run of admitJob wrote it, and nothing sent it): reused. Any other
 * `starting` one is failed (cancelled on an ended job), a `running` one unknown
 * (settleAbandonedAttempt, "orphaned").
 */
#ifdef PLAN_APART
#define ON_PRIMARY(a) (provOf[a] == 1)
#else
#define ON_PRIMARY(a) true
#endif
#ifdef BUG_ADMISSION_FAILS_ITS_OWN_ATTEMPT
#define OWN_FIRST_ATTEMPT false
#else
#define OWN_FIRST_ATTEMPT \
  (astate[SLOT(1)] == STARTING && astate[SLOT(2)] == NONE && astate[SLOT(3)] == NONE \
   && ON_PRIMARY(SLOT(1)))
#endif
#ifdef BUG_ADMISSION_SKIPS_ENDED_JOB
#define KEEPS_FIRST_ATTEMPT (ended || OWN_FIRST_ATTEMPT)
#else
#define KEEPS_FIRST_ATTEMPT (!ended && OWN_FIRST_ATTEMPT)
#endif
inline admitJob() {
  /* src/db/jobs.ts findJob, then markJobAdmitted */
  atomic {
    createsLeft == 0; admitted[g] = true; ended = (terminal[g] != OPEN);
    apiCrashes = 0; jobIntent = 1
  };
  /* src/activities/admissionAttempts.ts adoptAttempts: its own attempt 1 is reused only while the
     job is open; anything else left in flight is settled, on an ended job too (`starting`
     becomes `cancelled` there: it can never be sent) */
  atomic {
    if
    :: KEEPS_FIRST_ATTEMPT -> skip
    :: !KEEPS_FIRST_ATTEMPT -> abandonAttempt(SLOT(1))
    fi
  };
  /* src/activities/admissionAttempts.ts startFirstAttempt → src/db/attempts.ts createAttempt */
  if
  :: !ended && astate[SLOT(1)] == NONE -> createAttempt(SLOT(1), 1)
  :: else -> skip
  fi
}

/*
 * TERMINATE: a run's admission after its job's run was closed (src/activities/admission.ts
 * admitIn, one transaction). adoptAttempts takes over what the closed run left: attempt 1 still
 * `starting`, alone, on the plan's primary, of an open job, is reused (its call is scheduled
 * again: a second execution, and the begin lets only one of them send it); any other `starting`
 * one is failed, never_sent (cancelled on an ended job); a `running` one is unknown. The run goes
 * on after the attempts made (src/workflows/policy.ts resumePosition), and decides on a retry of
 * the job's last attempt as the closed run would have (src/workflows/retryPolicy.ts resumedRetry →
 * retryAfterFailure), from that attempt's row as adoption left it (src/activities/admission.ts
 * lastFailureOf): a failed attempt whose failure its provider is tried again for (never_sent,
 * whether the closed run or this admission made it so; with RETRIES, a failure that may heal),
 * while the cap has room. The closed run's note of its retry (noteOnJob) only sets when the new
 * run makes it; the model has no clock, so it has no note.
 */
#define LAST_MADE \
  (astate[SLOT(3)] != NONE -> 3 : (astate[SLOT(2)] != NONE -> 2 : (astate[SLOT(1)] != NONE -> 1 : 0)))
#if defined(TERMINATE) && defined(PLAN_APART)
#define RESUMED_RETRY \
  retryOf = (!ended && !hedged && LAST_MADE != 0 && astate[LAST_MADE] == FAILED \
             && retriable[LAST_MADE] && ROOM_FOR_RETRY -> provOf[LAST_MADE] : 0);
#else
#define RESUMED_RETRY
#endif
#ifdef PLAN_APART
#define LAST_PROVIDER \
  (provOf[3] > provOf[2] -> (provOf[3] > provOf[1] -> provOf[3] : provOf[1]) \
   : (provOf[2] > provOf[1] -> provOf[2] : provOf[1]))
#define RESUME_PLAN prov = (KEEPS_FIRST_ATTEMPT -> 1 : LAST_PROVIDER + 1);
#else
#define RESUME_PLAN
#endif

/* the first unknown attempt of this workflow's job, 0 if none */
#define ANY_UNKNOWN \
  (astate[SLOT(1)] == UNKNOWN -> SLOT(1) : (astate[SLOT(2)] == UNKNOWN -> SLOT(2) \
   : (astate[SLOT(3)] == UNKNOWN -> SLOT(3) : 0)))
#ifdef BUG_NO_IN_FLIGHT_GUARD
#define BLOCKING_UNKNOWN 0
#else
#define BLOCKING_UNKNOWN ANY_UNKNOWN
#endif

/* One call the workflow waits for: its report, or the activity's timeout (start-to-close or
 * heartbeat; a timer, so it may fire at any moment before the report), or (EXECUTIONS) the
 * activity's failure: CallBegunElsewhere. The run stops waiting for that execution. */
#ifdef EXECUTIONS
#define STOP_WAITING(k) listen[k] = 0
#else
#define STOP_WAITING(k) skip
#endif
#define WATCH(s) \
  :: atomic { \
       waiting[s] && replied[SLOT(s)] == RETURNED -> \
       waiting[s] = false; running--; STOP_WAITING(SLOT(s)); JUDGE(s) \
     } \
  :: atomic { \
       waiting[s] && replied[SLOT(s)] != RETURNED -> STOP_WAITING(SLOT(s)); abandonCall(SLOT(s)) \
     }; \
     AGAIN_AFTER_CRASH(abandonAttempt(SLOT(s))); \
     d_step { waiting[s] = false; running--; JUDGE(s) }


#ifdef PLAN_APART
#define NO_RETRY_DUE (retryOf == 0)
#else
#define NO_RETRY_DUE true
#endif
#ifdef BREAKER
#define DEFERRED_LEFT (deferred[1] || deferred[2] || deferred[3])
#define FIRST_DEFERRED (deferred[1] -> 1 : (deferred[2] -> 2 : 3))
#endif

/* The workflow of generation g's job. */
proctype JobWorkflow(byte g) {
#if GENS == 2
  byte base = BASE(g);
#endif
  byte next = 1;               /* the next provider of the plan */
  byte running;                /* calls the workflow waits for */
  bool waiting[MAXA + 1];      /* by provider */
  byte u;                      /* an unknown attempt */
  bool over, record, bad;      /* what the last status lookup saw */
#ifdef REPLAY
  bool replayed;               /* the last look was a replay (PostgreSQL let it begin) */
  byte replyOf;                /* what that replay brought back */
#endif
#ifdef PLAN_APART
  byte prov = 1;               /* the plan's next provider */
#endif
#ifdef PLAN_APART
  byte retryOf;                /* the provider a retry is due on (PlannedRetry), 0 if none */
#endif
#ifdef BREAKER
  bool passedBy;               /* the last createAttempt was refused: the provider is unavailable */
  bool deferred[MAXA + 1];     /* providers the plan passed by (job.deferred) */
  byte later;                  /* the one it comes back to */
#endif
#ifdef ADOPTS
  bool ended;                  /* the job row admission read had ended */
#endif
#ifdef ADMISSION_TWICE

  /* Admission writes attempt 1 itself; its worker may die after that, before the workflow task
     completes: admission then runs again. A create after admission is a replay answered from
     the job row alone: it writes nothing and commutes with every other step, so the model has
     every create happen before admission (a reduction by hand). */
  admitJob();
  AGAIN_AFTER_CRASH(admitJob());
  /* src/workflows/jobRun.ts nextProvider: unless admission found the job ended, the attempt it
     wrote (firstAttempt) is the first one the loop runs, before anything else */
  if
  :: !ended -> ended = false; launch()
  :: else -> ended = false
  fi;
#else
  /* src/activities/admission.ts admitJob (idempotent). A create after admission is a replay
     answered from the job row alone: it writes nothing and commutes with every other step, so
     the model has every create happen before admission (a reduction by hand, as SPIN's partial
     order reduction cannot see it). */
  atomic {
    createsLeft == 0; admitted[g] = true;
    /* nothing reads these after admission: forget them, so states differ only in what matters */
    apiCrashes = 0; jobIntent = 1;
#ifdef TERMINATE
    ended = (terminal[g] != OPEN);
    /* src/workflows/jobRun.ts resumeAfter: the next attempt, and the plan's next provider */
    next = (KEEPS_FIRST_ATTEMPT -> 1 : LAST_MADE + 1);
    RESUME_PLAN
    /* src/activities/admissionAttempts.ts adoptAttempts: what a closed run left in flight */
    if
    :: KEEPS_FIRST_ATTEMPT -> skip
    :: !KEEPS_FIRST_ATTEMPT -> abandonCall(SLOT(1))
    fi;
    abandonCall(SLOT(2));
    abandonCall(SLOT(3));
    /* src/workflows/jobWorkflow.ts runJob → src/workflows/retryPolicy.ts resumedRetry: the last
       attempt's failure as adoption left it (src/activities/admissionAttempts.ts lastFailureOf) */
    RESUMED_RETRY
    ended = false
#else
    skip
#endif
  };
  AGAIN_AFTER_CRASH(admitted[g] = true);
#endif

  do
  :: terminal[g] != OPEN -> break   /* src/workflows/jobWorkflow.ts runJob: the job has ended */
#ifdef TERMINATE
  /* src/workflows/jobWorkflow.ts jobWorkflow: terminated by an operator while it waits (for its
     calls, or between two attempts or looks); nothing more of this run happens, and its calls go
     on as zombies */
  :: atomic { MAY_TERMINATE -> CLOSE_RUN }; goto closed
#endif
  /* src/workflows/runAttempt.ts runAttempt: the call reports, or its timeout fires and the
     attempt is abandoned (abandonAttempt) */
  WATCH(1)
  WATCH(2)
  WATCH(3)
  /* src/workflows/exclusiveLoop.ts runExclusive: one attempt at a time; an unknown one blocks
     everything after it */
  :: atomic { terminal[g] == OPEN && !hedged && running == 0 -> u = BLOCKING_UNKNOWN };
     if
     :: u != 0 -> reconcile(u)
#ifdef PLAN_APART
     /* src/workflows/waits.ts waitToRetry: a note on the job (which only tells a new run
        when to make the retry, if this one closes first), a durable timer, then the same
        provider */
     :: u == 0 && retryOf != 0 -> launchOn(retryOf); retryOf = 0
     :: u == 0 && retryOf == 0 && PLAN_LEFT -> launch()
#else
     :: u == 0 && PLAN_LEFT -> launch()
#endif
#ifdef BREAKER
     /* src/workflows/waits.ts waitForDeferred: nothing else is left, so a provider the
        plan passed by is tried again once its timer fires (and passed by again if still open) */
#ifdef BUG_SKIPPED_AS_TRIED
     :: u == 0 && NO_RETRY_DUE && !PLAN_LEFT && false ->
#else
     :: u == 0 && NO_RETRY_DUE && !PLAN_LEFT && DEFERRED_LEFT ->
#endif
        atomic { later = FIRST_DEFERRED; deferred[later] = false };
        launchOn(later); later = 0
#ifdef BUG_SKIPPED_AS_TRIED
     /* src/workflows/waits.ts waitForDeferred: the providers passed by are forgotten */
     :: u == 0 && NO_RETRY_DUE && !PLAN_LEFT ->
#else
     :: u == 0 && NO_RETRY_DUE && !PLAN_LEFT && !DEFERRED_LEFT ->
#endif
#else
     :: u == 0 && NO_RETRY_DUE && !PLAN_LEFT ->
#endif
        /* src/workflows/jobWorkflow.ts runJob: every provider failed */
        finishJob(g, J_FAILED); AGAIN_AFTER_CRASH(finishJob(g, J_FAILED))
     fi
  :: terminal[g] == OPEN && !hedged && tryAgain ->
     /* src/workflows/policy.ts chooseNextAttempt: refused while an attempt is in flight or
        blocking; otherwise the loop's next attempt serves it */
     tryAgain = false
  /* src/workflows/hedgedLoop.ts runHedged: after a delay of silence (a timer) or on a
     user's request, the next one starts too; the first compare-and-swap wins */
  :: terminal[g] == OPEN && hedged && running == 0 && PLAN_LEFT -> launch()
  :: terminal[g] == OPEN && hedged && running > 0 && PLAN_LEFT -> launch()
  :: terminal[g] == OPEN && hedged && tryAgain && PLAN_LEFT -> tryAgain = false; launch()
  :: terminal[g] == OPEN && hedged && tryAgain && !PLAN_LEFT ->
     tryAgain = false      /* refused: the plan is spent */
  :: atomic { terminal[g] == OPEN && hedged && running == 0 && !PLAN_LEFT -> u = ANY_UNKNOWN };
     if
     :: u != 0 -> reconcile(u)
     :: else -> finishJob(g, J_FAILED); AGAIN_AFTER_CRASH(finishJob(g, J_FAILED))
     fi
  od;
  /* The job ended (a winner, every provider failed, an operator's cancel): stop waiting for
     the calls still out; each is abandoned and its answer, if any, comes late and loses. */
  do
  /* src/workflows/hedgedLoop.ts runHedged: the losers' scopes are cancelled (abandonAttempt) */
  WATCH(1)
  WATCH(2)
  WATCH(3)
  :: running == 0 -> break
  od;
#ifdef WORKFLOW_END_SEEN
  wfDone[g] = true;   /* ghost: read by the Invariants monitor and the later create */
#endif
#ifdef TERMINATE
closed:   /* a terminated run ends here */
  skip
#endif
}

/* ================= outside the workflow ================= */

/*
 * src/api/routes/jobCreation.ts POST /v1/jobs → src/service/jobs.ts createJob →
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
    STEP_ASSERT(jobsForKey == 1);
    if
    :: jobIntent != intent ->
       skip   /* 409: the key was used with another intent (IdempotencyKeyReuseError) */
    :: jobIntent == intent && apiCrashes > 0 ->
       apiCrashes--       /* the API dies between its insert and the workflow's start */
    :: jobIntent == intent ->
       /* created, or not yet admitted: start the workflow; Temporal refuses a second start */
       if
       :: !admitted[1] && !workflowStarted[1] -> workflowStarted[1] = true; run JobWorkflow(1)
       :: else -> skip
       fi
    fi
  }
}

#ifdef RELEASE
/*
 * A create after the key was released: src/service/jobs.ts createJob →
 * src/db/jobs.ts insertJobOrFindExisting finds no live job and inserts the key's next
 * generation (insertNextGeneration), then ensureJobWorkflow starts its own workflow (an id of
 * its own). One such create, with the first intent, after the first three; its API does not
 * crash. A reduction by hand: after a release when nothing of generation 1 could still take
 * effect, what is left of generation 1's workflow and calls (reports to a workflow that no
 * longer waits, no-op settles, the shared crash budget) commutes with generation 2's steps, so
 * the model lets it finish before generation 2's create.
 */
#define GEN1_QUIET \
  (wfDone[1] && (!tried[1] || callDone[1]) && (!tried[2] || callDone[2]) \
   && (!tried[3] || callDone[3]))
active proctype LaterClient() {
end:
  atomic {
    released && jobsForKey == 1 && createsLeft == 0 && (!gen1Final || GEN1_QUIET) ->
    jobsForKey++;
    workflowStarted[2] = true; run JobWorkflow(2)
  }
}
#endif

/* src/service/sweeper.ts sweepJobs: a job row whose workflow never started gets one; with
 * TERMINATE, so does an open job whose run has closed. With RELEASE or TERMINATE, also
 * reconcileAttemptsOfEndedJobs: what an ending left `starting` or `running` is settled as the
 * ending would have (TERMINATE), and an unknown attempt of an ended job is looked up as its
 * workflow would (src/activities/attempts.ts reconcileAttempt), until it settles. */
#define ENDED_UNKNOWN(a) (astate[a] == UNKNOWN && terminal[JOB_OF(a)] != OPEN)
#define LEFT_BY_ENDING(a) \
  (terminal[JOB_OF(a)] != OPEN \
   && (astate[a] == STARTING || (astate[a] == RUNNING && completedBy[JOB_OF(a)] != a)))
#define SETTLE_SEEN(k) \
  if \
  :: astate[k] == STARTING -> astate[k] = CANCELLED \
  :: astate[k] == RUNNING && completedBy[JOB_OF(k)] != k -> astate[k] = UNKNOWN \
  :: else -> skip \
  fi
active proctype Sweeper() {
#ifdef SWEEPER_LOOKS
  byte u;
  bool over, record, bad, noted;
#endif
end:
  do
  :: atomic {
       /* src/service/sweeper.ts sweepJobs → src/service/jobs.ts ensureJobWorkflow */
       jobsForKey == 1 && jobIntent != 0 && !workflowStarted[1] ->
       workflowStarted[1] = true; run JobWorkflow(1)
     }
#ifdef TERMINATE
  :: atomic {
       /* a new run for an open job whose run has closed (as a backend's startJob call makes
          one too): src/service/sweeper.ts sweepJobs */
       runClosed[1] && terminal[1] == OPEN -> runClosed[1] = false; run JobWorkflow(1)
     }
#ifndef BUG_ENDING_LEAVES_ATTEMPTS
  :: atomic {
       /* src/db/attemptSettlement.ts settleAttemptsLeftByEndings (first in reconcileAttemptsOfEndedJobs):
          what an ending's trigger could not see is settled, waiting for its row this time */
       FIRST_OF(LEFT_BY_ENDING) != 0 -> SETTLE_SEEN(1); SETTLE_SEEN(2); SETTLE_SEEN(3)
     }
#endif
#endif
#ifdef SWEEPER_LOOKS
  /* src/service/sweeper.ts reconcileAttemptsOfEndedJobs → reconcileAttempt */
  :: atomic { FIRST_OF(ENDED_UNKNOWN) != 0 -> u = FIRST_OF(ENDED_UNKNOWN) };
     lookupStatus(u, noted);
     d_step { u = 0; over = false; record = false; bad = false; noted = false }
#endif
  od
}

#ifdef DUPLICATE_EXECUTIONS
/*
 * Temporal runs an activity at least once: attempt k's provider call is executed a second time
 * (once in all), at any moment after its first execution was scheduled: alongside the first, after
 * it, or after the run that scheduled it has closed. Either the run was reset and the new run
 * schedules the call again, so the run now waits for this execution (src/workflows/jobWorkflow.ts
 * runAttempt), or the task was delivered twice and nobody waits for this one. A reduction by hand:
 * only while the attempt is `starting` or `running`. On a settled attempt a second execution sends
 * nothing, writes nothing and reports the attempt as it is; a run that waits for it learns nothing
 * that the first execution's timeout would not teach it as well.
 */
#define SECOND_EXECUTION(k) \
  :: atomic { \
       secondExecutions > 0 && execs[k] > 0 && (astate[k] == STARTING || astate[k] == RUNNING) -> \
       secondExecutions--; \
       if \
       :: listen[k] != 0 -> listen[k] = execs[k] + 1; replied[k] = 0 \
       :: true -> skip \
       fi; \
       execs[k]++; run ProviderCall(k, execs[k]) \
     }
active proctype Executions() {
end:
  do
  SECOND_EXECUTION(1)
  SECOND_EXECUTION(2)
  SECOND_EXECUTION(3)
  od
}
#endif

#ifdef REPLAY
/*
 * The key windows (REPLAY). Each attempt's window counts from its first send
 * (src/db/attemptReplays.ts keepFirstSend, before the request leaves: replay_until on PostgreSQL's
 * clock, first_sent_at + keyWindow - margin); the provider keeps the key from its receipt for the
 * key window. Past replay_until PostgreSQL refuses a replay's begin, and some time after the
 * provider forgets the key. The model joins both in one step, at a moment of its own, once it can
 * matter (the attempt is `unknown`) and under two assumptions the configuration must make true:
 *   - the margin covers the clocks' skew and a replay's time on the wire: a replay begun before
 *     replay_until reaches the provider before it forgets the key (so the window closes only when
 *     no replay is on its way; a send is given up by then, src/activities/replayLook.ts replayLook);
 *   - the late-result window is inside the key window: the first request can no longer land when
 *     the key is forgotten (so the window closes only once the call is over).
 */
#define WINDOW_CLOSES(k) \
  :: atomic { !keyGone[k] && astate[k] == UNKNOWN && CALL_OVER(k) && !replaying[k] -> keyGone[k] = true }
/* src/db/attemptReplays.ts replayWindow: replay_until has passed, and the provider forgets the key */
active proctype KeyWindow() {
end:
  do
  WINDOW_CLOSES(1)
  WINDOW_CLOSES(2)
  WINDOW_CLOSES(3)
  od
}
#endif

/*
 * src/db/jobKeyRelease.ts releaseJobKey (src/service/keyRelease.ts releaseKey): only an ended job's key,
 * once, and only when none of its attempts may still take effect (attempt_may_take_effect,
 * and the trigger jobs_release_only_when_settled, migration 0010): none starting, running or
 * unknown, and no call that began, has not ended and is within its late-result window.
 */
#define MAY_TAKE_EFFECT(a) (IN_FLIGHT(a) || (startedAt[a] && !CALL_OVER(a)))
#define GEN1_FINAL (!MAY_TAKE_EFFECT(1) && !MAY_TAKE_EFFECT(2) && !MAY_TAKE_EFFECT(3))
#ifdef BUG_RELEASE_WHILE_UNKNOWN
#define RELEASE_ALLOWED true
#else
#define RELEASE_ALLOWED GEN1_FINAL
#endif
/* ghost: the work an attempt did is on record (it succeeded, or lost the race) */
#define EFFECT_KNOWN(a) (!did[a] || astate[a] == SUCCEEDED || astate[a] == LOST)
#define GEN1_KNOWN (EFFECT_KNOWN(1) && EFFECT_KNOWN(2) && EFFECT_KNOWN(3))

/*
 * A reduction by hand: a release when nothing of generation 1 could still take effect (as the
 * release requires, unless a planted mistake drops that) leaves nothing of generation 1 that
 * can change, and nothing that a step which changes anything reads: its attempts are settled,
 * its calls are over, and a callback about one of them would change nothing. What only its
 * history says is forgotten (not raced[]: a recordResult begun before the release may still
 * check it), so that generation 2's states do not multiply by generation 1's histories; what
 * the properties read (attempt states, outcome) is kept.
 */
#ifdef QUIRKY_PROVIDERS
#define FORGET_KEYS(k) keyed[k] = false; keyWhenAsked[k] = false
#else
#define FORGET_KEYS(k) skip
#endif
#ifdef EVIDENCE_OF_WORK
#define FORGET_2XX(k) answered[k] = false
#else
#define FORGET_2XX(k) skip
#endif
#ifdef CONTRADICTORY_CALLBACK
#define FORGET_REPORT(k) reported[k] = 0
#else
#define FORGET_REPORT(k) skip
#endif
#define FORGET(k) \
  readVersion[k] = 0; notFound[k] = 0; did[k] = false; broken[k] = false; \
  callEnded[k] = false; windowOver[k] = false; startedAt[k] = false; FORGET_KEYS(k); \
  FORGET_2XX(k); FORGET_REPORT(k)

/*
 * An operator, telling the truth from the provider's ledger:
 * src/service/attempts.ts resolveAttempt (through the workflow's update, or
 * resolveAfterWorkflowClosed): `succeeded` goes through recordResult; `failed` only when the
 * provider has no record and the call can no longer land. cancelJob: finishJobWithoutResult,
 * of the key's live job. With RELEASE, releaseKey.
 */
#ifdef NO_OPERATOR
proctype Operator() {
#else
active proctype Operator() {
#endif
  byte u;
  bool resolved, cancelled;
#ifdef NO_RESOLVE
  resolved = true;
#endif
end:
  do
  :: !resolved && FIRST_OF(IS_UNKNOWN) != 0 ->
     u = FIRST_OF(IS_UNKNOWN);
     resolved = true;
     if
     :: did[u] -> recordResult(u)
#ifdef REPLAY
     /* src/db/attemptFailureReports.ts reportAttemptFailure (operatorsFailure): the operator's
        "failed", true of the provider's ledger when it is written, inside the key window or
        after it; held while a replay of the attempt may still land (applyReport) */
     :: atomic {
          !did[u] && CALL_OVER(u) ->
          if :: IN_FLIGHT(u) -> reported[u] = R_TRUE; applyReport(u, true) :: else -> skip fi
        }
#else
     :: !did[u] && CALL_OVER(u) ->
        /* src/db/attemptSettlement.ts settleAttemptWithoutResult, code 'operator' (the CHECK allows it) */
        atomic { if :: IN_FLIGHT(u) -> astate[u] = FAILED :: else -> skip fi }
#endif
     :: else -> skip     /* the call could still land: not now */
     fi;
     u = 0
  /* src/service/attempts.ts cancelJob */
  :: !cancelled && jobsForKey > 0 && terminal[jobsForKey] == OPEN ->
     cancelled = true;
     finishJob(jobsForKey, J_CANCELLED)
#ifdef RELEASE
  :: atomic {
       /* src/db/jobKeyRelease.ts releaseJobKey (from src/service/keyRelease.ts releaseKey): only when
          nothing of the job may still take effect */
       !released && terminal[1] != OPEN && RELEASE_ALLOWED ->
       released = true;
       releaseBlind = !GEN1_KNOWN;
       gen1Final = GEN1_FINAL;
       if
       :: gen1Final -> FORGET(1); FORGET(2); FORGET(3); version[1] = 0
       :: else -> skip
       fi
     }
#endif
  od
}

#define SUCCESS_REPORT(k) :: did[k] && !broken[k] -> a = k
#define FAILURE_REPORT(k) \
  :: (astate[k] == RUNNING || astate[k] == UNKNOWN) && !did[k] -> a = k; reported[k] = R_TRUE \
  :: (astate[k] == RUNNING || astate[k] == UNKNOWN) && !CALL_OVER(k) && ans[k] == 0 -> \
     a = k; reported[k] = R_CONTRADICTED \
  :: astate[k] == UNKNOWN && answered[k] -> a = k; reported[k] = R_CONTRADICTED
/* REPLAY: a signed "failed" about an unknown attempt whose call is over, true when it is sent (the
 * provider has done nothing for it); a replay under its key may be on its way, and do the work as
 * the first request under the key: the report is held while one may still land */
#define REPLAY_FAILURE_REPORT(k) \
  :: astate[k] == UNKNOWN && CALL_OVER(k) && !did[k] -> a = k; reported[k] = R_TRUE; failure = true

/* src/service/providerCallbacks.ts acceptProviderCallback: a signed webhook from the provider about one
 * attempt, possibly long after its call: a result goes through recordResult (only when the
 * provider did the work and its output keeps the contract); with CONTRADICTORY_CALLBACK a
 * "failed" report goes through reportAttemptFailure: a true one (nothing done, nothing will
 * be), or one sent while the call is out that the call's own 2xx then contradicts, or one that
 * comes after a 2xx already did; with REPLAY, one true when sent, inside the key window or
 * after it. */
#ifdef NO_CALLBACK
proctype Callback() {
#else
active proctype Callback() {
#endif
  byte a;
#ifdef REPLAY
  bool failure;                /* set and cleared inside the one atomic step */
#endif
end:
  atomic {
    if
    SUCCESS_REPORT(1)
    SUCCESS_REPORT(2)
    SUCCESS_REPORT(3)
#if GENS == 2
    SUCCESS_REPORT(4)
    SUCCESS_REPORT(5)
    SUCCESS_REPORT(6)
#endif
#ifdef CONTRADICTORY_CALLBACK
    FAILURE_REPORT(1)
    FAILURE_REPORT(2)
    FAILURE_REPORT(3)
#if GENS == 2
    FAILURE_REPORT(4)
    FAILURE_REPORT(5)
    FAILURE_REPORT(6)
#endif
#endif
#ifdef REPLAY
    REPLAY_FAILURE_REPORT(1)
    REPLAY_FAILURE_REPORT(2)
    REPLAY_FAILURE_REPORT(3)
#endif
    fi;
#ifdef CONTRADICTORY_CALLBACK
    if
    :: reported[a] == 0 -> recordResult(a)
    :: reported[a] != 0 -> applyReport(a, false)   /* src/db/attemptFailureReports.ts reportAttemptFailure */
    fi;
#elif defined(REPLAY)
    if
    :: !failure -> recordResult(a)
    :: failure -> applyReport(a, false)   /* src/db/attemptFailureReports.ts reportAttemptFailure */
    fi;
    failure = false;
#else
    recordResult(a);
#endif
    a = 0
  }
}

#ifdef BREAKER
/*
 * src/service/providerHealth.ts noteCallEnd: other jobs' calls, on any worker, open a provider's
 * breaker (or a 429 with Retry-After cools it down) at any moment; after its cool-off a probe
 * closes it. Only creating an attempt reads it (src/db/attempts.ts createAttempt): status
 * lookups, callbacks, late answers and operators never do.
 */
active proctype Breaker() {
end:
  do
  :: atomic { breakerOpens > 0 -> breakerOpens--; open[1] = true }
  :: atomic { NP >= 2 && breakerOpens > 0 -> breakerOpens--; open[2] = true }
  :: atomic { open[1] -> open[1] = false }
  :: atomic { open[2] -> open[2] = false }
  od
}
#endif

/* src/api/routes/jobActions.ts POST /v1/jobs/:id/attempts: a user asks for another attempt. In
 * exclusive mode it changes nothing the loop would not do (refused while an attempt is in
 * flight, else served by the next attempt), so only hedged jobs get one. */
proctype User() {
end:
  do
  :: atomic { !tryAgain && workflowStarted[1] && terminal[1] == OPEN -> tryAgain = true }
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

#define WINNERS(b) \
  ((astate[b + 1] == SUCCEEDED) + (astate[b + 2] == SUCCEEDED) + (astate[b + 3] == SUCCEEDED))
#define ONE_WINNER(j) \
  (WINNERS(BASE(j)) <= 1 && (completedBy[j] == 0 || astate[completedBy[j]] == SUCCEEDED) \
   && (terminal[j] == J_SUCCEEDED) == (completedBy[j] != 0) && result[j] == completedBy[j])
#ifdef REPLAY
#define ONE_EFFECT(b) \
  (did[b + 1] + did[b + 2] + did[b + 3] + again[b + 1] + again[b + 2] + again[b + 3] <= 1)
#define NO_LATE_SEND (!lateSend)
#else
#define ONE_EFFECT(b)  (did[b + 1] + did[b + 2] + did[b + 3] <= 1)
#define NO_LATE_SEND true
#endif
#define FAILED_IDLE(a) (astate[a] != FAILED || !did[a])
#define STABLE(j) \
  (firstTerminal[j] == OPEN || (terminal[j] == firstTerminal[j] && result[j] == firstResult[j]))
/* Nothing would ever send or settle an attempt left `starting`, and it would keep the key from
   being released: checked where admission runs twice (the only runs whose admission writes). */
#ifdef ADMISSION_TWICE
#define NOTHING_STARTING(j) \
  (!wfDone[j] || (astate[BASE(j) + 1] != STARTING && astate[BASE(j) + 2] != STARTING \
                  && astate[BASE(j) + 3] != STARTING))
#else
#define NOTHING_STARTING(j) true
#endif
#define TRIED_ALL(j) \
  (terminal[j] != J_FAILED || (tried[BASE(j) + 1] && (NP < 2 || tried[BASE(j) + 2]) \
                               && (NP < 3 || tried[BASE(j) + 3])))

#if GENS == 2
#define AT_MOST_ONE_JOB      (jobsForKey <= 1 + released)
#define AT_MOST_ONE_WINNER   (ONE_WINNER(1) && ONE_WINNER(2))
#define NO_DOUBLE_EFFECT     (!sideEffects || (ONE_EFFECT(0) && ONE_EFFECT(MAXA)))
#define FAILED_MEANS_NOTHING_DONE \
  (!sideEffects || (FAILED_IDLE(1) && FAILED_IDLE(2) && FAILED_IDLE(3) && FAILED_IDLE(4) \
                    && FAILED_IDLE(5) && FAILED_IDLE(6)))
#define FAILED_JOB_DID_NOTHING \
  (!sideEffects || ((terminal[1] != J_FAILED || !ANY_DID(0)) \
                    && (terminal[2] != J_FAILED || !ANY_DID(MAXA))))
#define OUTCOME_STABLE       (STABLE(1) && STABLE(2))
#define FAILS_ONLY_AFTER_TRYING (TRIED_ALL(1) && TRIED_ALL(2))
#define RELEASE_HIDES_NOTHING (!ANY_DID(MAXA) || !releaseBlind)
#define ENDS_WITH_NOTHING_STARTING (NOTHING_STARTING(1) && NOTHING_STARTING(2))
#else
#define AT_MOST_ONE_JOB      (jobsForKey <= 1)
#define AT_MOST_ONE_WINNER   ONE_WINNER(1)
#define NO_DOUBLE_EFFECT     (!sideEffects || ONE_EFFECT(0))
#define FAILED_MEANS_NOTHING_DONE \
  (!sideEffects || (FAILED_IDLE(1) && FAILED_IDLE(2) && FAILED_IDLE(3)))
#define FAILED_JOB_DID_NOTHING (!sideEffects || terminal[1] != J_FAILED || !ANY_DID(0))
#define OUTCOME_STABLE       STABLE(1)
/* With TERMINATE, an attempt's row may be written and its run closed before its call is
   scheduled: the new run fails it never_sent, and tries its provider again only if the cap has
   room. So there a job may also fail untried once its cap is spent. */
#ifdef TERMINATE
#define FAILS_ONLY_AFTER_TRYING (TRIED_ALL(1) || (terminations == 0 && ATTEMPTS_MADE >= CAP))
#else
#define FAILS_ONLY_AFTER_TRYING TRIED_ALL(1)
#endif
#define RELEASE_HIDES_NOTHING true
#define ENDS_WITH_NOTHING_STARTING NOTHING_STARTING(1)
#endif

#ifdef RETRIES
#define NO_FUTILE_CALL (!futile)
#else
#define NO_FUTILE_CALL true
#endif
/* A provider of the plan is really tried when a request left for it; an exclusive job may fail
   without that only once its attempt cap is spent (an attempt never sent is tried again while
   the cap leaves room, whatever its provider's retries). Hedged jobs retry nothing. Checked
   where a retry may have room (PLAN_APART); elsewhere the job is hedged, or the cap is the
   plan's length and a job fails only once it is spent. */
#define ATTEMPTS_MADE \
  ((astate[1] != NONE) + (astate[2] != NONE) + (astate[3] != NONE))
#ifdef PLAN_APART
#define SENT_TO_ALL (sent[1] && (NP < 2 || sent[2]) && (NP < 3 || sent[3]))
#define FAILS_ONLY_AFTER_SENDING \
  (hedged || terminal[1] != J_FAILED || SENT_TO_ALL || ATTEMPTS_MADE >= CAP)
#else
#define FAILS_ONLY_AFTER_SENDING true
#endif

/* Once nothing else can happen (SPIN's timeout: no process can move), nothing is left `starting`
   (never to be sent or settled) or `running` (a call nobody will end or look at: whether its work
   happened would never be known): the runs with TERMINATE. */
#ifdef TERMINATE
#define IN_CALL(a) (astate[a] == STARTING || astate[a] == RUNNING)
#define NOTHING_LEFT_IN_CALL (!timeout || !(IN_CALL(1) || IN_CALL(2) || IN_CALL(3)))
#else
#define NOTHING_LEFT_IN_CALL true
#endif

/*
 * Invariants of every reachable state: the monitor can step in at any moment, so SPIN tries it
 * in every state. Each assert's comment names the property a counterexample breaks.
 */
active proctype Invariants() {
end:
  atomic {
    !(AT_MOST_ONE_JOB && AT_MOST_ONE_WINNER && NO_DOUBLE_EFFECT && FAILED_MEANS_NOTHING_DONE
      && FAILED_JOB_DID_NOTHING && OUTCOME_STABLE && FAILS_ONLY_AFTER_TRYING && RELEASE_HIDES_NOTHING
      && ENDS_WITH_NOTHING_STARTING && NO_FUTILE_CALL && FAILS_ONLY_AFTER_SENDING
      && NOTHING_LEFT_IN_CALL && NO_LATE_SEND) ->
    /* property: at most one job per (owner, key) and generation, and one live (unreleased) job */
    assert(AT_MOST_ONE_JOB);
    /* property: at most one winner, and it is the job's recorded result */
    assert(AT_MOST_ONE_WINNER);
    /* property: a job with side effects has them at most once (no double charge) */
    assert(NO_DOUBLE_EFFECT);
    /* property: a failed attempt of a job with side effects did nothing (never failed by a clock) */
    assert(FAILED_MEANS_NOTHING_DONE);
    /* property: a job with side effects that failed had none (no attempt of it did the work) */
    assert(FAILED_JOB_DID_NOTHING);
    /* property: a recorded outcome never changes */
    assert(OUTCOME_STABLE);
    /* property: a job fails only after each provider of its plan was really tried (its call run), or a terminate left its cap spent */
    assert(FAILS_ONLY_AFTER_TRYING);
    /* when generation 2 does the work, each attempt of generation 1 that did the work was on
       record at the release (succeeded, or lost as a race), and none of its work came after */
    /* property: a key release never hides or overlaps an effect */
    assert(RELEASE_HIDES_NOTHING);
    /* property: when its workflow ends, no attempt of its job is left starting */
    assert(ENDS_WITH_NOTHING_STARTING);
    /* property: a provider that refused a request (a 400) is never sent it again */
    assert(NO_FUTILE_CALL);
    /* property: a job fails only after each provider of its plan was sent a request, or its attempt cap was spent */
    assert(FAILS_ONLY_AFTER_SENDING);
    /* property: nothing is left starting or running once nothing else can happen */
    assert(NOTHING_LEFT_IN_CALL);
    /* property: no request under an attempt's key reaches its provider after the key window */
    assert(NO_LATE_SEND)
  }
}

/* Under weak fairness: once started, the job ends or waits on an operator; it never spins. */
ltl settles {
  [] (workflowStarted[1] -> <> (terminal[1] != OPEN || waitsOnOperator[1]))
}
