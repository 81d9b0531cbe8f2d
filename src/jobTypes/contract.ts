import type { z } from 'zod';
import type { ProviderKind } from '../domain/providerKind';
import { issueLines } from '../domain/zodIssues';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What a job type promises: the input it takes, the prompt it sends, the output it accepts. */
export interface JobTypeContract<Input, Output> {
  name: string;
  /** Bump when the business checks (or any meaning the schemas do not show) change. */
  revision: number;
  /** A representative input: its rendered prompt is part of the contract version. */
  sample: Input;
  input: z.ZodType<Input>;
  /** Strict schema of the provider's answer; unknown keys are a contract failure. */
  output: z.ZodType<Output>;
  /**
   * How a chat provider is asked to answer, and how its answer is read. `json` (the default):
   * the output schema is asked for (structured output, a forced tool) and the answer parsed as
   * JSON. `text`: no format is asked, and the model's message text, as written, is the output
   * `{ text }`; the model's own stop reason and a non-empty text are then the contract.
   */
  answer?: 'json' | 'text';
  /** True when running it twice could do something twice (a charge, a write): never hedged. */
  sideEffects: boolean;
  /** Which kinds of provider can serve it. */
  providerKinds: readonly ProviderKind[];
  /** The chat prompt, for chat providers. */
  prompt(input: Input): ChatMessage[];
  /** Business rules beyond the schema; returns the reason when the output is unacceptable. */
  check(input: Input, output: Output, context: { attemptId: string }): string | undefined;
  /**
   * The result a provider's own report of a call proves (`onejob attempts settle --from`), to be
   * checked as any result is; only job types that have it are settled from reports.
   */
  resultFromReport?(input: Input, reported: ReportedWork, attemptId: string): unknown;
}

/** What a provider's report says it did for one of our keys (src/domain/providerReport.ts). */
export interface ReportedWork {
  providerId: string;
  /** In the currency's minor units. */
  amountMinor: number;
  currency: string;
  account?: string;
}

// Job types are looked up by name at run time, so the registry holds them type-erased.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyJobTypeContract = JobTypeContract<any, any>;

/** Whether an output satisfies a contract: the parsed output, or why not. */
export type OutputCheck =
  { ok: true; output: unknown } | { ok: false; reason: string; issues: string[] };

export function checkOutput(
  contract: AnyJobTypeContract,
  input: unknown,
  output: unknown,
  context: { attemptId: string },
): OutputCheck {
  const parsed = contract.output.safeParse(output);
  if (!parsed.success) {
    const issues = issueLines(parsed.error);
    return { ok: false, reason: `output breaks the contract: ${issues.join('; ')}`, issues };
  }
  const reason = contract.check(input, parsed.data, context);
  return reason
    ? { ok: false, reason: `output rejected: ${reason}`, issues: [reason] }
    : { ok: true, output: parsed.data };
}
