import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../domain/canonicalJson';
import type { AnyJobTypeContract } from './contract';

/**
 * The identity of a job type's contract: a hash of its input and output schemas, its prompt
 * template (rendered for the contract's sample input, so the hash does not depend on how the
 * code was compiled), how its answer is read (free text or JSON) and its revision, which is bumped when the business checks change. Any
 * change to what is asked or accepted makes a new version; certifications of the old one stop
 * counting.
 */
export function contractVersion(contract: AnyJobTypeContract): string {
  const canonical = canonicalJson({
    name: contract.name,
    revision: contract.revision,
    input: z.toJSONSchema(contract.input, { unrepresentable: 'any' }),
    output: z.toJSONSchema(contract.output, { unrepresentable: 'any' }),
    prompt: contract.providerKinds.includes('http') ? null : contract.prompt(contract.sample),
    // Only a free-text contract names its answer, so the JSON ones keep the versions they had.
    ...(contract.answer === 'text' ? { answer: 'text' } : {}),
  });
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

/** The output schema as JSON Schema, for providers' structured-output features. */
export function outputJsonSchema(contract: AnyJobTypeContract): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(contract.output, {
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return schema;
}
