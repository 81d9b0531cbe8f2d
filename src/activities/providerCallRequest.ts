/**
 * The request of a provider call: sent once, heartbeating while Temporal waits for it, cut off
 * when the provider's late-result window closes; and what came back, as the call's answer.
 */
import { Context } from '@temporalio/activity';
import { cleanUsage, type Money, type TokenUsage } from '../domain/cost';
import { LATE_WINDOW_EXCEEDED } from '../domain/retries';
import type { AnyJobTypeContract } from '../jobTypes';
import { ProviderCallError } from '../providers/callErrors';
import { ContractViolation, type Provider } from '../providers/provider';

/** What a call brought back: an answer (with what it used and cost), a failure, or a violation. */
export interface CallAnswer {
  output: unknown;
  usage: TokenUsage | undefined;
  reportedCost: Money | undefined;
  failure: ProviderCallError | undefined;
  violation: ContractViolation | undefined;
}

/** Sends the request and reads its answer; never throws for what the provider did. */
export async function requestCall(
  provider: Provider,
  request: {
    attemptId: string;
    contract: AnyJobTypeContract;
    input: Record<string, unknown>;
    /** The bytes kept for the provider's replays, sent as they are. */
    body: Uint8Array | undefined;
  },
  call: {
    context: Context;
    /** Aborts the request when the late-result window closes (`windowMs` after the begin). */
    windowClosed: AbortSignal;
    windowMs: number;
    /** Whether Temporal has stopped waiting for the activity. */
    isLate: () => boolean;
  },
): Promise<CallAnswer> {
  const { context, windowClosed, windowMs, isLate } = call;
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
      attemptId: request.attemptId,
      contract: request.contract,
      input: request.input,
      ...(request.body ? { body: request.body } : {}),
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
  return { output, usage, reportedCost, failure, violation };
}
