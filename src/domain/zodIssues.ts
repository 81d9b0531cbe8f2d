import type { z } from 'zod';

/** Each issue of a failed parse as `path: message` (`(root)` for the value as a whole). */
export function issueLines(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
}
