import type { Span } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { lateResultTimeoutMs, notFoundGraceMs } from '../providers/provider';
import { noteCallEnd } from '../service/providerHealth';
import { nudgeOrHandOver } from '../service/results';
import { observe } from '../telemetry/histograms';
import { genAiUsageAttributes, inSpan } from '../telemetry/spans';
import type { AttemptOutcome } from '../workflows/definitions';
import { checkRejectionRate } from './eligibilityCheck';
import { beginCall, keepForReplay } from './providerCallBegin';
import { requestCall } from './providerCallRequest';
import { settleCall } from './providerCallSettlement';
import type { ActivityDeps } from './types';

/** The provider call: its own activity, on its own task queue, never retried. */
export function providerCallActivities(
  deps: Pick<
    ActivityDeps,
    | 'pool'
    | 'providers'
    | 'logger'
    | 'temporal'
    | 'metrics'
    | 'taskQueue'
    | 'webhookRetry'
    | 'rejectionRule'
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
    const begun = await beginCall(deps, input.attemptId, windows);
    // Settled without a request: begun by another execution, or of an unknown job type.
    if (!('token' in begun)) return begun;
    const { attempt, token, job, contract } = begun;
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
      ...(provider.config.kind === 'http'
        ? {}
        : { 'onejob.model': provider.config.model, 'gen_ai.request.model': provider.config.model }),
    });
    const kept = await keepForReplay(deps, begun, provider);
    if (!('body' in kept)) return kept;
    const started = Date.now();
    const isLate = (): boolean => Date.now() - started >= context.info.startToCloseTimeoutMs;
    const windowMs = lateResultTimeoutMs(provider.config);
    const windowClosed = AbortSignal.timeout(Math.max(0, beforeBegin + windowMs - Date.now()));
    const answer = await requestCall(
      provider,
      { attemptId: attempt.id, contract, input: job.input, body: kept.body },
      { context, windowClosed, windowMs, isLate },
    );
    const { failure } = answer;
    const callSeconds = (Date.now() - started) / 1000;
    const { outcome, certaintyOfCall, cost, rejected } = await settleCall(
      { pool, logger, metrics },
      { attempt, token, job, contract, provider, sideEffects, log, isLate },
      answer,
    );
    span.setAttributes({
      ...genAiUsageAttributes(answer.usage),
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
    // Continuous certification: advisory like the health above (the next rejection looks again).
    if (rejected)
      await checkRejectionRate(deps, { attemptId: attempt.id, provider, contract, log }).catch(
        (error: unknown) => log.error({ err: error }, 'could not check the rejection rate'),
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
