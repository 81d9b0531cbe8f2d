import type { z } from 'zod';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What a job type promises: the input it takes, the prompt it sends, the output it accepts. */
export interface JobTypeContract<Input, Output> {
  name: string;
  input: z.ZodType<Input>;
  /** Strict schema of the provider's answer; unknown keys are a contract failure. */
  output: z.ZodType<Output>;
  /** True when running it twice could do something twice (a charge, a write). */
  sideEffects: boolean;
  prompt(input: Input): ChatMessage[];
  /** Business rules beyond the schema; returns the reason when the output is unacceptable. */
  check(input: Input, output: Output): string | undefined;
}

// Job types are looked up by name at run time, so the registry holds them type-erased.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyJobTypeContract = JobTypeContract<any, any>;
