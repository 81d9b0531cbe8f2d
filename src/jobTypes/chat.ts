import { z } from 'zod';
import type { ChatMessage, JobTypeContract } from './contract';

const input = z.strictObject({
  prompt: z
    .string()
    .max(100_000)
    .refine((text) => text.trim().length > 0, 'prompt must not be empty'),
  /** Instructions sent as the system message, when given. */
  system: z
    .string()
    .max(20_000)
    .refine((text) => text.trim().length > 0, 'system must not be empty when given')
    .optional(),
});

// The model's text as written, under one key so the result is a JSON object like every job's.
const output = z.strictObject({
  text: z.string().refine((text) => text.trim().length > 0, 'text must not be empty'),
});

/**
 * Free text: a prompt in, the model's plain answer out. No output format is asked for, so what
 * makes an answer acceptable is the model's own stop reason (it finished: not cut at the output
 * cap, not a refusal or a content filter) and a text that is not empty; the adapters read both
 * before the text. Pure inference, so it may be hedged.
 */
export const chat: JobTypeContract<z.infer<typeof input>, z.infer<typeof output>> = {
  name: 'chat',
  revision: 1,
  sample: { prompt: 'The contract sample: one plain question, answered in plain text.' },
  input,
  output,
  answer: 'text',
  sideEffects: false,
  providerKinds: ['openai-compatible', 'anthropic'],
  prompt: ({ prompt, system }) => {
    const messages: ChatMessage[] = system ? [{ role: 'system', content: system }] : [];
    return [...messages, { role: 'user', content: prompt }];
  },
  // The stop reason and the schema say all there is to say about free text.
  check: () => undefined,
};
