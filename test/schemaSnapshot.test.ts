import { readFileSync } from 'node:fs';
import { dumpSchema, SCHEMA_FILE } from '../tools/stack/schemaSnapshot';
import { createTestDatabase } from './support/database';
import { harness } from './support/harness';

test('docs/schema.sql is the schema the migrations build (npm run schema:dump writes it again)', async () => {
  const db = await createTestDatabase();
  try {
    const dumped = await dumpSchema(harness().pgDumpPath, db.url);
    expect(dumped).toContain('CREATE TABLE public.jobs');
    expect(dumped).toBe(readFileSync(SCHEMA_FILE, 'utf8'));
  } finally {
    await db.drop();
  }
});
