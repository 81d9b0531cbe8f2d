import { isGrpcServiceError } from '@temporalio/client';
import { causeChain } from '../domain/causeChain';
import { isWorkflowTaskFailing } from '../service/errors';

// Network errors on the way to a dependency: it is down or unreachable, not our request wrong.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
// gRPC statuses from Temporal that mean "not now": UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED.
const GRPC_NOT_NOW = new Set([14, 4, 8]);

/**
 * Whether an error means that PostgreSQL or Temporal cannot be reached or cannot serve now (or,
 * for one job, while its workflow's task keeps failing)
 * (answered with 503 and Retry-After, never as if the job did not exist).
 */
export function isDependencyUnavailable(error: unknown): boolean {
  // Temporal turns updates away while a workflow's task keeps failing (a starved worker).
  if (isWorkflowTaskFailing(error)) return true;
  for (const current of causeChain(error)) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (NETWORK_CODES.has(code)) return true;
      // PostgreSQL: connection exceptions (08), operator intervention (57P0x: shutting down,
      // cannot connect now), insufficient resources (53), database not accepting connections.
      if (/^(08|53|57P0)/.test(code) || code === '55000') return true;
    }
    if (
      typeof message === 'string' &&
      /timeout exceeded when trying to connect|Connection terminated/i.test(message)
    )
      return true;
    if (isGrpcServiceError(current) && GRPC_NOT_NOW.has(current.code)) return true;
  }
  return false;
}
