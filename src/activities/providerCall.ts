import type { Span } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { beginProviderCallOfJob, endCallWithoutResult } from '../db/attemptCalls';
import { isSuccessStatus, unreadSuccessVerdict } from '../domain/certainty';
import { cleanUsage, type Money, type TokenUsage } from '../domain/cost';
import { FAILURES, typedFailure } from '../domain/failures';
import { LATE_WINDOW_EXCEEDED } from '../domain/retries';
import { checkOutput, findJobType } from '../jobTypes';
import { costOfCall } from '../providers/pricing';
import {
  ContractViolation,
  lateResultTimeoutMs,
  notFoundGraceMs,
  ProviderCallError,
  VIOLATION_CODES,
} from '../providers/provider';
import { noteCallEnd } from '../service/providerHealth';
import { attemptOutcome, nudgeOrHandOver, recordResult } from '../service/results';
import { observe } from '../telemetry/histograms';
import { inSpan } from '../telemetry/spans';
import type { AttemptOutcome } from '../workflows/definitions';
import type { ActivityDeps } from './types';

/** The provider call: its own activity, on its own task queue, never retried. */
export function providerCallActivities(
  deps: Pick<
    ActivityDeps,
    'pool' | 'providers' | 'logger' | 'temporal' | 'metrics' | 'taskQueue' | 'webhookRetry'
  >,
) {
  const { pool, providers, logger, temporal, metrics } = deps;
  // Each call's deadline (written when it begins) is its start plus its provider's window; its
  // grace after that is written with it.
  const windows = Object.fromEntries(
    providers.names().map((name) => {
      const { config } = providers.get(name);
      return [
        name,
        { lateResultMs: lateResultTimeoutMs(config), graceMs: notFoundGraceMs(config) },
      ];
    }),
  );

  return {
    /**
     * One provider call for one attempt. Nothing is sent unless the attempt moves from
     * `starting` to `running` while its job is open (one statement). The whole call, body
     * included, ends at the provider's late-result window. What it brings back is settled
     * here, so a call that outlives its attempt timeout (this code keeps running in the
     * worker) takes the very same path and then nudges the workflow:
     * - an answer that satisfies the contract goes through the compare-and-swap;
     * - an answer that breaks it is a definite failure, unless the job type or the provider has
     *   side effects: then the effect may have happened and the attempt is `unknown`;
     * - an error is `failed` when it is definite (nothing was done) or when nothing has side
     *   effects (the call has ended, so nothing more can come); otherwise `unknown`.
     * A cancel does not abort the request: once sent, the provider may do the work anyway,
     * and a late answer is recorded as a loss.
     */
    callProvider(input: { attemptId: string }): Promise<AttemptOutcome> {
      return inSpan('provider call', { 'onejob.attempt_id': input.attemptId }, (span) =>
        callOnce(input, span),
      );
    },
  };

  async function callOnce(input: { attemptId: string }, span: Span): Promise<AttemptOutcome> {
    const context = Context.current();
    // The call's window is counted from before its begin is sent: this worker stops listening
    // no later than PostgreSQL's deadline for the call (its begin's now() plus the window), so
    // whatever it read by then is written within the provider's grace after that deadline.
    const beforeBegin = Date.now();
    const begun = await beginProviderCallOfJob(pool, input.attemptId, windows);
    const { attempt } = begun;
    // Left `starting` because this worker has no such provider: nothing was sent, and the
    // workflow's abandonment makes the attempt `failed` (never sent), not `unknown`.
    if (attempt.state === 'starting' && !providers.has(attempt.provider))
      throw new Error(
        `this worker has no provider ${attempt.provider}, so attempt ${attempt.id} was not sent`,
      );
    if (begun.token === undefined) {
      // Another execution of this call began it (a run terminated or reset, a task delivered
      // twice): that one alone sends it and writes what it came to. This one sends nothing
      // and writes nothing; a settled attempt is reported as it is.
      if (attempt.state !== 'running') return attemptOutcome(pool, attempt);
      logger.warn(
        { event: 'call_begun_elsewhere', attemptId: attempt.id, jobId: attempt.jobId },
        'another execution began this call; this one sent nothing and wrote nothing',
      );
      // The workflow stops waiting for this execution: its abandonment makes the attempt
      // `unknown`, and the call's own end (or a look) settles it.
      // planted-bug site (tools/chaos/plantedBugs.ts): begin-returns-nothing
      throw typedFailure(
        FAILURES.callBegunElsewhere,
        `attempt ${attempt.id}: its call was begun by another execution; this one sent nothing`,
      );
    }
    const { token, job } = begun;
    const contract = findJobType(job.type);
    if (!contract) {
      return attemptOutcome(
        pool,
        await endCallWithoutResult(
          pool,
          attempt.id,
          token,
          { outcome: 'failed' },
          {
            state: 'failed',
            error: {
              code: 'no_contract',
              message: `job type of ${attempt.id} is unknown; nothing was sent`,
            },
          },
        ),
      );
    }
    const provider = providers.get(attempt.provider);
    const sideEffects = contract.sideEffects || provider.config.sideEffects;
    const log = logger.child({
      jobId: job.id,
      attemptId: attempt.id,
      workflowId: job.workflowId,
      provider: provider.config.name,
    });
    // Who was asked what, never with what: no prompt, no input, no key on a span.
    span.setAttributes({
      'onejob.job_id': job.id,
      'onejob.job_type': job.type,
      'onejob.provider': provider.config.name,
      ...(provider.config.kind === 'http' ? {} : { 'onejob.model': provider.config.model }),
    });
    const started = Date.now();
    const isLate = (): boolean => Date.now() - started >= context.info.startToCloseTimeoutMs;
    const windowMs = lateResultTimeoutMs(provider.config);
    const windowClosed = AbortSignal.timeout(Math.max(0, beforeBegin + windowMs - Date.now()));

    // Heartbeats only while Temporal still waits for this activity: once the attempt has
    // timed out, the call goes on listening for a late answer, but a heartbeat would only
    // cost the server a lookup that finds nothing (every second, for the whole window).
    const heartbeat = setInterval(() => {
      if (isLate()) clearInterval(heartbeat);
      else context.heartbeat();
    }, 1_000);
    let output: unknown;
    let usage: TokenUsage | undefined;
    let reportedCost: Money | undefined;
    let failure: ProviderCallError | undefined;
    let violation: ContractViolation | undefined;
    try {
      const response = await provider.call({
        attemptId: attempt.id,
        contract,
        input: job.input,
        signal: windowClosed,
      });
      ({ output, cost: reportedCost } = response);
      usage = cleanUsage(response.usage);
    } catch (error) {
      if (windowClosed.aborted)
        failure = new ProviderCallError(
          `no complete answer within the late-result window (${windowMs} ms); the call was cut off`,
          'ambiguous',
          LATE_WINDOW_EXCEEDED,
          // A 2xx whose body was still coming: its status line is evidence all the same.
          error instanceof ProviderCallError ? error.httpStatus : undefined,
        );
      else if (error instanceof ContractViolation) {
        violation = error;
        usage = cleanUsage(error.usage);
      } else if (error instanceof ProviderCallError) failure = error;
      else
        failure = new ProviderCallError(
          `provider call threw: ${(error as Error).message}`,
          'ambiguous',
          'unexpected',
        );
    } finally {
      clearInterval(heartbeat);
    }
    const callSeconds = (Date.now() - started) / 1000;
    // What the call cost is recorded whatever became of it: a loser, a broken answer and a
    // late one are paid for all the same.
    const cost = costOfCall(provider.config, {
      usage,
      reported: reportedCost,
      refusedBeforeWork: failure?.certainty === 'definite',
    });
    const ledger = { usage, cost };

    let outcome: AttemptOutcome;
    // Whether what the provider did is known: an ambiguous failure, or a broken answer where
    // there are side effects, leaves it open.
    let certaintyOfCall = 'definite';
    if (failure) {
      // A 2xx whose body could not be read whole (over the cap, cut off, still coming when the
      // window closed) is the certainty table's own row; for any other error, with nothing
      // that could have had an effect, an ended call that brought no answer is over.
      const unread = isSuccessStatus(failure.httpStatus)
        ? unreadSuccessVerdict(sideEffects)
        : undefined;
      // planted-bug site (tools/chaos/plantedBugs.ts): unknown-as-failed
      const failed = unread
        ? unread.settle === 'failed'
        : failure.certainty === 'definite' || !sideEffects;
      const certainty = unread?.certainty ?? failure.certainty;
      certaintyOfCall = certainty;
      log.warn({ certainty, code: failure.code, late: isLate(), failed }, 'provider call failed');
      outcome = await attemptOutcome(
        pool,
        await endCallWithoutResult(
          pool,
          attempt.id,
          token,
          { ...ledger, outcome: 'failed' },
          {
            state: failed ? 'failed' : 'unknown',
            error: {
              code: failure.code,
              certainty,
              ...(failure.httpStatus === undefined ? {} : { httpStatus: failure.httpStatus }),
              ...(failure.detail ? { provider: failure.detail } : {}),
              message: failure.message,
              ...(failed && certainty === 'ambiguous'
                ? { settledBecause: 'no side effects, and the call has ended' }
                : {}),
            },
            // A 2xx from a provider with side effects: evidence of work (certainty.ts).
            ...(unread?.settle === 'unknown' ? { successAnswered: true } : {}),
          },
        ),
      );
    } else {
      const checked = violation
        ? { ok: false as const, reason: violation.message, issues: [violation.message] }
        : checkOutput(contract, job.input, output, { attemptId: attempt.id });
      // Truncated, refused, format ignored: each its own code; else the contract's checks.
      const code = violation ? VIOLATION_CODES[violation.kind] : 'contract_violation';
      if (checked.ok) {
        // The call's end is written by the compare-and-swap's own transaction, which alone
        // says whether the answer won: whoever sees the job end sees what the call cost.
        outcome = await recordResult(
          { pool, logger, metrics },
          {
            attemptId: attempt.id,
            result: checked.output,
            source: isLate() ? 'late-result' : 'provider',
            callEnd: { ...ledger, token },
          },
        );
        // Its answer came after a verdict settled the attempt (this worker wrote it past the
        // provider's grace): kept as a race, and its owner is told (job.late_result).
        if (outcome.state === 'failed' || outcome.state === 'cancelled')
          log.error(
            { event: 'result_after_verdict', state: outcome.state, sideEffects },
            'the provider answered success after the attempt was settled without a result: the work may have been done',
          );
      } else {
        if (sideEffects) certaintyOfCall = 'ambiguous';
        // The raw answer stays on the attempt, never on the job.
        log.warn({ code, issues: checked.issues, sideEffects }, 'provider output rejected');
        const raw = violation ? violation.rawOutput : output;
        outcome = await attemptOutcome(
          pool,
          await endCallWithoutResult(
            pool,
            attempt.id,
            token,
            { ...ledger, outcome: 'rejected' },
            sideEffects
              ? {
                  state: 'unknown',
                  error: {
                    code: 'contract_violation_after_effect',
                    violation: code,
                    message: `the provider answered success, but ${checked.reason}. It may have taken effect: only a status lookup whose answer satisfies the contract, a signed callback or an operator settles it`,
                    issues: checked.issues,
                  },
                  rawOutput: raw,
                  // A 2xx from a provider with side effects: evidence of work (certainty.ts),
                  // written with the call's end.
                  successAnswered: true,
                }
              : {
                  state: 'failed',
                  error: { code, message: checked.reason, issues: checked.issues },
                  rawOutput: raw,
                },
          ),
        );
      }
    }
    span.setAttributes({
      'onejob.outcome': outcome.state,
      'onejob.late': isLate(),
      'onejob.certainty': certaintyOfCall,
      ...(failure ? { 'onejob.error_code': failure.code } : {}),
      ...(cost ? { 'onejob.cost': cost.amount, 'onejob.cost_currency': cost.currency } : {}),
    });
    if (metrics)
      observe(
        metrics.providerCallSeconds,
        { provider: provider.config.name, outcome: outcome.state },
        callSeconds,
      );
    // The provider's health for every worker: advisory, so a failure to note it is logged,
    // never taken for the call's own (its end is already recorded).
    await noteCallEnd(pool, logger, provider.config, {
      attempt,
      state: outcome.state,
      ...(failure
        ? {
            failure: {
              code: failure.code,
              ...(failure.detail?.retryAfterMs === undefined
                ? {}
                : { retryAfterMs: failure.detail.retryAfterMs }),
            },
          }
        : {}),
    }).catch((error: unknown) =>
      log.error({ err: error }, 'could not note the provider call in its health'),
    );
    // The workflow stopped waiting for this call: wake it when the call settled the attempt.
    // One that is still unknown is the reconciler's to look at; its workflow sleeps on. A run
    // that has closed (terminated, or ended by a cancel) leaves the owner's news to this call.
    if ((isLate() || context.cancellationSignal.aborted) && outcome.state !== 'unknown')
      await nudgeOrHandOver(
        { pool, temporal, logger, taskQueue: deps.taskQueue, retry: deps.webhookRetry },
        job,
        attempt.id,
      );
    return outcome;
  }
}
