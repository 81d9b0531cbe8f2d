import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';

/**
 * Applies onejob's migrations, then exits: the separate step a deployment runs before the
 * services, as the role that owns the schema, when the services only check it
 * (ONEJOB_MIGRATIONS=verify). Reads DATABASE_URL only; prints what it applied, one line each,
 * or one line saying why it could not.
 */
async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set (the schema owner's connection)");
  const pool = createPool(url, { max: 1 });
  try {
    const applied = await migrate(pool);
    for (const name of applied) console.log(`applied ${name}`);
    console.log(applied.length === 0 ? 'the schema is up to date' : `${applied.length} applied`);
  } finally {
    await pool.end();
  }
}

main().catch((error: unknown) => {
  console.error(`migrate: ${(error as Error).message.split('\n')[0]}`);
  process.exitCode = 1;
});
