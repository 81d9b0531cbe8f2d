import { charge } from './charge';
import { chat } from './chat';
import { checkOutput, type AnyJobTypeContract, type OutputCheck } from './contract';
import { summarize } from './summarize';

export { checkOutput } from './contract';
export { contractVersion, outputJsonSchema } from './contractVersion';
export type { AnyJobTypeContract, ChatMessage, JobTypeContract } from './contract';

const jobTypes = new Map<string, AnyJobTypeContract>([
  [summarize.name, summarize],
  [chat.name, chat],
  [charge.name, charge],
]);

export function jobTypeNames(): string[] {
  return [...jobTypes.keys()];
}

export function findJobType(name: string): AnyJobTypeContract | undefined {
  return jobTypes.get(name);
}

/**
 * A result offered for a job from outside a provider call (an operator, a callback, a status
 * lookup), checked against the job type's contract: its output schema and business checks.
 */
export function checkJobResult(
  job: { type: string; input: unknown },
  output: unknown,
  attemptId: string,
): OutputCheck {
  const contract = findJobType(job.type);
  if (!contract) return { ok: false, reason: 'no contract', issues: [`no job type ${job.type}`] };
  return checkOutput(contract, job.input, output, { attemptId });
}
