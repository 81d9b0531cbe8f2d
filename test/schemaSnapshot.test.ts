import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadMigrations } from '../src/db/migrate';
import { dumpSchema, SCHEMA_FILE } from '../tools/stack/schemaSnapshot';
import { createTestDatabase } from './support/database';
import { harness, ROOT } from './support/harness';

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

/** A count in prose, in figures or in words ("Fifteen migrations", "twenty-four migrations"). */
const UNITS = 'zero one two three four five six seven eight nine'.split(' ');
const TEENS =
  'ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(' ');
const TENS = 'twenty thirty forty fifty sixty seventy eighty ninety'.split(' ');
const NUMBER_WORDS = new Map<string, number>([
  ...UNITS.map((word, n): [string, number] => [word, n]),
  ...TEENS.map((word, n): [string, number] => [word, 10 + n]),
  ...TENS.flatMap((ten, t) =>
    UNITS.map((unit, n): [string, number] => [n ? `${ten}-${unit}` : ten, 20 + 10 * t + n]),
  ),
]);
// Longest first, so "twenty-four" is read whole rather than as "twenty".
const NUMBER = [...NUMBER_WORDS.keys()].sort((a, b) => b.length - a.length).join('|');
const COUNT_OF = new RegExp(`\\b(\\d+|${NUMBER})\\s+(?:[\\w-]+\\s+)?(migrations|tables)\\b`, 'gi');

test('a count of migrations or of tables stated in the docs is the count there is', async () => {
  const actual = {
    migrations: (await loadMigrations()).length,
    tables: readFileSync(SCHEMA_FILE, 'utf8').match(/^CREATE TABLE /gm)?.length ?? 0,
  };
  const docs = [
    'README.md',
    ...readdirSync(path.join(ROOT, 'docs'))
      .filter((file) => file.endsWith('.md'))
      .map((file) => `docs/${file}`),
  ];
  const stated: string[] = [];
  const wrong: string[] = [];
  for (const doc of docs)
    for (const [phrase, count, what] of readFileSync(path.join(ROOT, doc), 'utf8').matchAll(
      COUNT_OF,
    )) {
      const n = /^\d+$/.test(count!) ? Number(count) : NUMBER_WORDS.get(count!.toLowerCase());
      stated.push(`${doc}: ${phrase}`);
      const kind = what!.toLowerCase() as keyof typeof actual;
      if (n !== actual[kind]) wrong.push(`${doc}: "${phrase}", but there are ${actual[kind]}`);
    }
  // The data model in docs/architecture.md states both counts: seeing them shows the search works.
  // (A count of only some tables, "the two tables", is worded otherwise: it would be read here.)
  expect(stated.filter((s) => s.startsWith('docs/architecture.md')).length).toBe(2);
  expect(wrong).toEqual([]);
});
