import { charge } from './charge';
import type { AnyJobTypeContract } from './contract';
import { summarize } from './summarize';

export { checkOutput } from './contract';
export { contractVersion, outputJsonSchema } from './contractVersion';
export type { AnyJobTypeContract, ChatMessage, JobTypeContract } from './contract';

const jobTypes = new Map<string, AnyJobTypeContract>([
  [summarize.name, summarize],
  [charge.name, charge],
]);

export function jobTypeNames(): string[] {
  return [...jobTypes.keys()];
}

export function findJobType(name: string): AnyJobTypeContract | undefined {
  return jobTypes.get(name);
}
