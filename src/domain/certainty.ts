/**
 * The certainty table: what each piece of evidence about an attempt lets us conclude. The
 * provider call, the reconcile loop and provider callbacks all decide by it, so no path can
 * settle `failed` what another path knows may have moved money.
 *
 * | evidence                                   | no side effects | side effects, no 2xx seen            | side effects, a 2xx answer seen |
 * | ------------------------------------------ | --------------- | ------------------------------------ | ------------------------------- |
 * | the call's definite refusal (nothing done) | failed          | failed                               | (cannot happen: one answer)     |
 * | the call's ambiguous error, call ended     | failed          | unknown (failed if a report is held) | (cannot happen: one answer)     |
 * | a 2xx that satisfies the contract          | result (CAS)    | result (CAS)                         | result (CAS)                    |
 * | a 2xx that breaks the contract             | failed          | unknown, and the 2xx is kept         | unknown                         |
 * | a 2xx whose body was not read whole (over  | failed          | unknown, and the 2xx is kept         | unknown                         |
 * | the cap, cut off, unfinished at the window)|                 |                                      |                                 |
 * | status lookup "no record", twice, call over| failed          | failed                               | unknown: needs an operator      |
 * | a replay inside the key window: a 2xx      | result (CAS)    | result (CAS)                         | result (CAS)                    |
 * | a replay refused in the provider's words   | failed          | failed                               | unknown: needs an operator      |
 * | a replay: in progress (409), 5xx, no answer| (not replayed)  | unknown, looked at again             | unknown, looked at again        |
 * | a replay: "key used with other parameters" | (not replayed)  | unknown: needs an operator           | unknown: needs an operator      |
 * | no replay after the key window (PostgreSQL refuses to begin one): search/status lookup, callback, operator |
 * | a signed "failed" callback                 | failed once the call is over; held while it may still answer (both) | unknown: needs an operator |
 * | an operator's "failed"                     | failed          | failed                               | failed (the operator looked)    |
 *
 * A 2xx from a provider with side effects has moved money as far as we can know: a provider
 * that files the charge under its own id, or answers "pending", has no record under our key,
 * so "no record" proves nothing about it. PostgreSQL holds the same rule
 * (`attempts_success_answer_is_not_failed_by_machine`, migration 0010).
 */

/** Evidence that, on its own, would say the attempt did nothing. */
export type FailureEvidence =
  'not-found-twice' | 'replay-refused' | 'failed-callback' | 'held-operator-failure';

export interface AttemptEvidence {
  /** The job type or the provider has side effects. */
  sideEffects: boolean;
  /** A provider with side effects answered this attempt's call with a 2xx. */
  successAnswered: boolean;
  /**
   * The provider has answered some attempt with a 2xx that broke the contract (migration 0017):
   * it may file work under a key of its own, so its "no record under our key" proves nothing.
   */
  recordsUntrusted?: boolean;
}

/** What a piece of failure evidence makes of an attempt. */
export type FailureVerdict =
  { settle: 'failed' } | { settle: 'unknown'; needsOperator: true; detail: string };

const NEEDS_OPERATOR: Record<FailureEvidence, string> = {
  'not-found-twice':
    'needs an operator: the provider answered success, but no record is found under our key',
  'replay-refused':
    'needs an operator: the provider answered success, but a replay of the request under its key was refused',
  'failed-callback':
    'needs an operator: the provider answered success, but a signed callback says it failed',
  'held-operator-failure':
    "needs an operator: the provider answered success after an operator's failed was held (given while the call could still answer)",
};

const UNTRUSTED_RECORDS =
  'needs an operator: no record is found under our key, but this provider has answered success in breach of its contract before (it may file work under a key of its own)';

/** The table's rows for evidence of failure (the call's own errors are settled where they end). */
export function failureVerdict(
  evidence: FailureEvidence,
  attempt: AttemptEvidence,
): FailureVerdict {
  // A lost answer leaves no successAnswered: "no record" from a provider that keeps records
  // under keys of its own is no evidence either way.
  const untrusted = evidence === 'not-found-twice' && attempt.recordsUntrusted === true;
  // planted-bug site (tools/chaos/plantedBugs.ts): not-found-outranks-2xx
  if (attempt.sideEffects && (attempt.successAnswered || untrusted))
    return {
      settle: 'unknown',
      needsOperator: true,
      detail: attempt.successAnswered ? NEEDS_OPERATOR[evidence] : UNTRUSTED_RECORDS,
    };
  return { settle: 'failed' };
}

/** The reason name of a 2xx answer cut off at the provider's cap (`maxResponseBytes`). */
export const RESPONSE_TOO_LARGE = 'response_too_large';

/** Whether an HTTP status is a success (2xx). */
export const isSuccessStatus = (status: number | undefined): boolean =>
  status !== undefined && status >= 200 && status < 300;

/** What a 2xx whose body was not read whole makes of the attempt, and with which certainty. */
export type UnreadSuccessVerdict =
  | { settle: 'failed'; certainty: 'definite' }
  | { settle: 'unknown'; certainty: 'ambiguous'; successAnswered: true };

/**
 * The table's row for a 2xx whose body could not be read whole (over the cap, cut off by a
 * dropped connection, still coming when the call's window closed): as a 2xx that breaks the
 * contract, nothing usable came back. Without side effects the call has ended with nothing to
 * wait for (failed, definite); with them the 2xx says the work may be done (unknown, and kept).
 */
export function unreadSuccessVerdict(sideEffects: boolean): UnreadSuccessVerdict {
  return sideEffects
    ? { settle: 'unknown', certainty: 'ambiguous', successAnswered: true }
    : { settle: 'failed', certainty: 'definite' };
}
