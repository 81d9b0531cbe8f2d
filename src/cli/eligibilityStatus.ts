/** What `onejob providers status` shows of continuous certification: losses now, and changes. */
import type { Queryable } from '../db/pool';
import {
  listDecertifications,
  listEligibilityChanges,
  type Decertification,
  type EligibilityChange,
} from '../db/providerEligibility';
import { renderTable } from './table';

/** A loss as the status lists it. */
function lossView(d: Decertification) {
  return {
    model: d.model,
    jobType: d.jobType,
    contractVersion: d.contractVersion,
    since: d.decertifiedAt.toISOString(),
    decidedBy: d.decidedBy,
    calls: d.calls,
    rejected: d.rejected,
    rate: d.rate,
    lowerBound: d.lowerBound,
    threshold: d.threshold,
    confidence: d.confidence,
    windowCalls: d.windowCalls,
    windowMs: d.windowMs,
  };
}

/** A kept change as the status lists it. */
function changeView(c: EligibilityChange) {
  return {
    at: c.at.toISOString(),
    provider: c.provider,
    model: c.model,
    jobType: c.jobType,
    contractVersion: c.contractVersion,
    change: c.change,
    by: c.changedBy,
    detail: c.detail,
  };
}

/** The losses in force, by provider, and (when asked) every change kept. */
export async function eligibilityStatus(db: Queryable, withHistory: boolean) {
  const losses = await listDecertifications(db);
  const byProvider = new Map<string, Array<ReturnType<typeof lossView>>>();
  for (const loss of losses)
    byProvider.set(loss.provider, [...(byProvider.get(loss.provider) ?? []), lossView(loss)]);
  const history = withHistory ? (await listEligibilityChanges(db)).map(changeView) : undefined;
  return { byProvider, history };
}

/** The same, as tables for a terminal (nothing when nothing was ever lost). */
export function renderEligibility(status: Awaited<ReturnType<typeof eligibilityStatus>>): string {
  const parts: string[] = [];
  const percent = (share: number): string => `${(share * 100).toFixed(1)} %`;
  const losses = [...status.byProvider].flatMap(([provider, list]) =>
    list.map((l) => [
      provider,
      l.jobType,
      l.contractVersion,
      l.since,
      `${l.rejected}/${l.calls}`,
      percent(l.lowerBound),
      percent(l.threshold),
    ]),
  );
  if (losses.length > 0)
    parts.push(
      'Lost fallback and hedge eligibility (until `onejob providers certify` passes):',
      renderTable(
        ['provider', 'job type', 'contract', 'since', 'rejected', 'lower bound', 'threshold'],
        losses,
      ),
    );
  if (status.history && status.history.length > 0)
    parts.push(
      'Eligibility changes:',
      renderTable(
        ['at', 'provider', 'job type', 'contract', 'change', 'by'],
        status.history.map((c) => [c.at, c.provider, c.jobType, c.contractVersion, c.change, c.by]),
      ),
    );
  return parts.join('\n');
}
