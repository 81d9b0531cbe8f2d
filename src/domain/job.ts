/** Pure job and attempt vocabulary, shared by every layer including workflow code. */

export const ATTEMPT_STATES = [
  'starting',
  'running',
  'succeeded',
  'lost',
  'failed',
  'unknown',
  'cancelled',
] as const;
export type AttemptState = (typeof ATTEMPT_STATES)[number];

/** States in which an attempt may still take effect at the provider. */
export const IN_FLIGHT_ATTEMPT_STATES: readonly AttemptState[] = ['starting', 'running', 'unknown'];

export const TERMINAL_JOB_STATUSES = ['succeeded', 'failed', 'cancelled'] as const;
export type TerminalJobStatus = (typeof TERMINAL_JOB_STATUSES)[number];

export const JOB_STATUSES = ['pending', 'running', 'unknown', ...TERMINAL_JOB_STATUSES] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const JOB_MODES = ['exclusive', 'hedged'] as const;
export type JobMode = (typeof JOB_MODES)[number];

export function isTerminalJobStatus(status: string): status is TerminalJobStatus {
  return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

/** What the owner asked for. The owner and the idempotency key identify it; this is its content. */
export interface JobIntent {
  type: string;
  input: Record<string, unknown>;
  providers: string[];
  mode: JobMode;
}

/** The attempt id is derived from the job and its number, so every layer names it the same way. */
export function attemptId(jobId: string, seq: number): string {
  if (!Number.isInteger(seq) || seq < 1)
    throw new RangeError(`attempt number must be >= 1, got ${seq}`);
  return `${jobId}:${seq}`;
}
