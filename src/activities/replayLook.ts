/**
 * A look at an unknown attempt by replay: its first request sent again, byte for byte, under the
 * same key, which inside the provider's key window answers the stored outcome of the first and
 * does no work twice. PostgreSQL lets the replay begin (beginReplay) or refuses it: at or after
 * the window less its margin, nothing is sent. What came back is recorded on the replay's row
 * and sorted here into what it tells of the attempt; attemptLook.ts settles by it.
 */
import {
  answerReplay,
  beginReplay,
  dropBodyPastWindow,
  replayWindow,
  REPLAY_REFUSED,
  type ReplayVerdict,
} from '../db/attemptReplays';
import type { Pool } from '../db/pool';
import type { Logger } from '../logger';
import { ProviderCallError } from '../providers/callErrors';
import type { ReplayLookup } from '../providers/replay';
import { inSpan } from '../telemetry/spans';
import {
  forAnOperator,
  onFailureEvidence,
  settledByAnswer,
  stillUnknown,
  type Looked,
  type OneLook,
} from './lookVerdicts';

/** What one replay tells of the attempt it looked at. */
export type ReplayFinding =
  /** A stored 2xx (or the work done now, by a first arrival under the key): its answer. */
  | { kind: 'answered'; output: unknown; replayId: string }
  /** The provider's own refusal of the very request: nothing was done under the key. */
  | { kind: 'refused'; error: { code: string; message: string } }
  /** The provider holds the key for other parameters: only a person can tell what happened. */
  | { kind: 'key_reused'; detail: string; answered: object }
  /** Still being processed, or no answer worth a verdict: looked at again, later. */
  | { kind: 'no_news'; detail: string; recheckInMs?: number }
  /** No replay may be sent any more (the window is over, or nothing was kept). */
  | { kind: 'closed'; detail: string };

/** Statuses that say nothing of the stored request: the replay itself was not let in. */
const NOT_LET_IN = new Set([401, 403, 407, 408, 409, 425, 429]);

/** PostgreSQL's check_violation: a guard trigger refused the write. */
const CHECK_VIOLATION = '23514';

/** What the error of a replay's send tells, and what is kept of it on the replay's row. */
function findingOfError(error: unknown): {
  finding: ReplayFinding;
  verdict: ReplayVerdict;
  status: number | undefined;
  detail: object;
} {
  if (!(error instanceof ProviderCallError))
    return {
      finding: { kind: 'no_news', detail: `the replay failed: ${(error as Error).message}` },
      verdict: 'no_news',
      status: undefined,
      detail: { message: (error as Error).message },
    };
  const status = error.httpStatus;
  const said = { message: error.message, type: error.detail?.type, code: error.detail?.code };
  if (status === 409)
    return {
      finding: {
        kind: 'no_news',
        detail: 'the provider is still processing the first request under this key',
      },
      verdict: 'in_progress',
      status,
      detail: said,
    };
  if (error.detail?.type === 'idempotency_error')
    return {
      finding: {
        kind: 'key_reused',
        detail: `needs an operator: the provider holds this key for other parameters (${error.message}${error.detail.code ? `, ${error.detail.code}` : ''}); what the first request did is for a person to find`,
        answered: { status, ...said },
      },
      verdict: 'key_reused',
      status,
      detail: said,
    };
  // A definite refusal in the provider's own words (a JSON error): the stored outcome of the
  // first request, or the same request refused again before any work, either way nothing done.
  const inItsWords = error.detail?.type !== undefined || error.detail?.code !== undefined;
  if (
    error.certainty === 'definite' &&
    status !== undefined &&
    !NOT_LET_IN.has(status) &&
    inItsWords
  )
    return {
      finding: {
        kind: 'refused',
        error: {
          code: 'replay_refused',
          message: `a replay of the request under its key was refused: ${error.message}${error.detail?.code ? ` (${error.detail.code})` : ''}`,
        },
      },
      verdict: 'refused',
      status,
      detail: said,
    };
  return {
    finding: {
      kind: 'no_news',
      detail: `the replay was answered, but not with the stored outcome: ${error.message}`,
      ...(error.detail?.retryAfterMs === undefined
        ? {}
        : { recheckInMs: error.detail.retryAfterMs }),
    },
    verdict: 'no_news',
    status,
    detail: said,
  };
}

/** Why no replay may be sent, as PostgreSQL holds the attempt's window. */
async function whyClosed(pool: Pool, attemptId: string): Promise<string> {
  const window = await replayWindow(pool, attemptId);
  if (!window)
    return 'its request was not kept for a replay (sent before the provider had a replay lookup)';
  if (window.over) {
    await dropBodyPastWindow(pool, attemptId);
    return `the provider's key window is over for a replay (first sent ${window.firstSentAt.toISOString()}, replays allowed until ${window.replayUntil.toISOString()}): a search or status lookup, a signed callback or an operator settles it`;
  }
  return 'its request is no longer kept for a replay (the attempt was settled meanwhile)';
}

/** One replay of an unknown attempt's first request, if PostgreSQL lets it begin. */
export async function replayLook(
  deps: { pool: Pool; logger: Logger },
  attemptId: string,
  replay: ReplayLookup,
  /** The provider's late-result window: how long a replay, like a call, may still land. */
  landWindowMs: number,
): Promise<ReplayFinding> {
  const { pool, logger } = deps;
  let begun;
  try {
    begun = await beginReplay(pool, attemptId, landWindowMs);
  } catch (refusal) {
    const { code, constraint } = refusal as { code?: string; constraint?: string };
    if (code !== CHECK_VIOLATION || constraint !== REPLAY_REFUSED) throw refusal;
    return { kind: 'closed', detail: await whyClosed(pool, attemptId) };
  }
  const { id: replayId, body, msLeft } = begun;
  return inSpan('replay lookup', { 'onejob.attempt_id': attemptId }, async (span) => {
    let found: ReturnType<typeof findingOfError>;
    try {
      // Given up unsent by the window's end less half its margin: the other half is left for
      // the clocks of PostgreSQL and the provider to disagree.
      const answer = await replay.send(attemptId, body, msLeft + replay.window.marginMs / 2);
      found = {
        finding: { kind: 'answered', output: answer.output, replayId },
        verdict: 'answered',
        status: answer.status,
        detail: { replayed: answer.replayed },
      };
    } catch (error) {
      found = findingOfError(error);
    }
    span.setAttribute('onejob.lookup', found.verdict);
    await answerReplay(pool, replayId, {
      httpStatus: found.status,
      verdict: found.verdict,
      detail: found.detail,
    }).catch((error: unknown) =>
      logger.error({ err: error, attemptId, replayId }, 'could not write what a replay answered'),
    );
    return found.finding;
  });
}

/** The verdict a replay's finding leads to. */
export async function byReplay(
  one: OneLook,
  found: Exclude<ReplayFinding, { kind: 'closed' }>,
): Promise<Looked> {
  const { deps, attempt } = one;
  if (found.kind === 'answered') return settledByAnswer(one, found.output, 'replay');
  if (found.kind === 'refused') return onFailureEvidence(one, 'replay-refused', found.error);
  if (found.kind === 'key_reused')
    return forAnOperator(one, 'replay-key-reused', found.detail, found.answered);
  return stillUnknown(
    deps,
    attempt,
    found.detail,
    found.recheckInMs === undefined ? {} : { recheckInMs: found.recheckInMs },
  );
}
