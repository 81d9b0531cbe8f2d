import { z } from 'zod';
import type { JobTypeContract } from './contract';

const input = z.strictObject({
  text: z
    .string()
    .max(100_000)
    .refine((text) => text.trim().length > 0, 'text must not be empty'),
});

// Strict: a provider that adds a top-level key of its own has not honoured the contract.
const output = z.strictObject({
  summary: z.string().refine((summary) => summary.trim().length > 0, 'summary must not be empty'),
});

export const summarize: JobTypeContract<z.infer<typeof input>, z.infer<typeof output>> = {
  name: 'summarize',
  revision: 1,
  sample: { text: 'The contract sample. Its rendered prompt is part of the contract version.' },
  input,
  output,
  // Pure inference: repeating it has no effect outside the answer.
  sideEffects: false,
  providerKinds: ['openai-compatible', 'anthropic'],
  prompt: ({ text }) => [
    {
      role: 'system',
      content:
        'You summarise text. Reply with one JSON object and nothing else: {"summary": "<a summary ' +
        'shorter than the text, in the language of the text>"}.',
    },
    { role: 'user', content: text },
  ],
  check: (request, result) => {
    if (result.summary.length >= request.text.length && request.text.length > 1) {
      return 'summary is not shorter than the text';
    }
    return undefined;
  },
};
