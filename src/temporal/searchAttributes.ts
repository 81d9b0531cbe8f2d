import type { Connection } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { NativeConnection } from '@temporalio/worker';
import { JOB_SEARCH_ATTRIBUTES } from '../workflows/definitions';

const INDEXED_VALUE_TYPES: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  [SearchAttributeType.KEYWORD]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.INT]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
};

/**
 * Registers the job search attributes on a server that lacks them (a self-hosted cluster);
 * the dev server gets them at start. Temporal Cloud manages them in its own console, so a
 * refusal here is reported, not fatal.
 */
export async function ensureSearchAttributes(
  connection: Pick<NativeConnection | Connection, 'operatorService'>,
  namespace: string,
): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set([
    ...Object.keys(existing.customAttributes ?? {}),
    ...Object.keys(existing.systemAttributes ?? {}),
  ]);
  const missing = JOB_SEARCH_ATTRIBUTES.filter((key) => !known.has(key.name));
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map((key) => [key.name, INDEXED_VALUE_TYPES[key.type]!]),
    ),
  });
  return missing.map((key) => key.name);
}
