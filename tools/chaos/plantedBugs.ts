import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/domain/packageRoot';

const ROOT = PACKAGE_ROOT;

/**
 * Mistakes the fault campaign and the model-based test must catch, each planted in a throwaway
 * copy of the compiled service (never in the service itself): a file of the copy is edited,
 * and/or a migration is added. The product marks each edited site with a comment that compilation
 * keeps, `planted-bug site (tools/chaos/plantedBugs.ts): <name>`; `from` is looked for right
 * after it, whatever its indentation or line breaks, so reformatting a product file moves
 * nothing here.
 */
export const PLANT_MARKER = 'planted-bug site (tools/chaos/plantedBugs.ts): ';
/** How far past its marker a plant's code may start. */
const SITE_REACH = 400;
/** Which of the machines must catch a planted bug: the fault campaign, the model-based test. */
type Catchers = ReadonlyArray<'campaign' | 'model-based'>;
const BOTH: Catchers = ['campaign', 'model-based'];

/**
 * A planted migration that redefines one of the schema's own functions: its latest definition in
 * the migrations, with `from` replaced by `to` (whitespace matching any whitespace), made
 * `CREATE OR REPLACE`. Built from the migrations as they are, so that a later change to the
 * function is kept in the copy but for the plant, and a plant whose code is gone refuses to build.
 */
export interface Redefinition {
  function: string;
  from: string;
  to: string;
}

/** A mistake: a file of the compiled product edited at its marked site, a migration, or both. */
interface Plant {
  /** The compiled file (under dist/src), what is replaced after its marker, and by what. */
  file?: string;
  from?: string;
  to?: string;
  /** SQL run after every migration of the copy, or a redefinition of a function of theirs. */
  migration?: string | Redefinition;
  caughtBy: Catchers;
}

const PLANTS = {
  /**
   * The compare-and-swap forgets its guard (`version` and `completed_by IS NULL`), and the
   * trigger that would still refuse a second outcome is dropped: a late result overwrites a
   * succeeded job's winner. (A cancelled or failed job's ending stays: the jobs table's CHECK
   * that only a succeeded job has a winner refuses that write, and the caller sees a 500.)
   */
  'cas-without-guard': {
    file: 'db/compareAndSwap.js',
    from: 'WHERE id = $1 AND version = $2 AND completed_by IS NULL',
    to: 'WHERE id = $1 AND $2::bigint IS NOT NULL',
    migration: 'DROP TRIGGER jobs_guard_outcome ON jobs;',
    caughtBy: BOTH,
  },
  /** A call that ended without an answer counts as failed even where it may have charged. */
  'unknown-as-failed': {
    file: 'activities/providerCallSettlement.js',
    // Outside the certainty table's own row for an answer over the cap.
    from: ": failure.certainty === 'definite' || !sideEffects;",
    to: ': true;',
    migration: undefined,
    caughtBy: BOTH,
  },
  /**
   * An exclusive job does not wait for its unknown attempt: the next provider runs (or the job
   * fails) while the first may still take effect, and the index that would refuse a second
   * in-flight attempt is dropped.
   */
  'exclusive-ignores-unknown': {
    file: 'workflows/exclusiveLoop.js',
    from: 'if (blocked)',
    to: 'if (blocked && !blocked)',
    migration: 'DROP INDEX attempts_one_in_flight_per_job;',
    caughtBy: BOTH,
  },
  /**
   * "No record under our key" outranks a 2xx from a provider with side effects: a charge filed
   * under the provider's own id fails after two lookups and the fallback charges again, and the
   * CHECK that would refuse that `failed` is dropped.
   */
  'not-found-outranks-2xx': {
    file: 'domain/certainty.js',
    from: 'if (attempt.sideEffects && (attempt.successAnswered || untrusted))',
    to: 'if (attempt.sideEffects && !attempt.sideEffects)',
    migration:
      'ALTER TABLE attempts DROP CONSTRAINT attempts_success_answer_is_not_failed_by_machine; DROP TRIGGER attempts_no_record_of_breaching_provider ON attempts;',
    // The model-based test's providers never file a charge under an id of their own.
    caughtBy: ['campaign'],
  },
  /**
   * A key is released while an attempt of its job may still take effect (an unknown charge, a
   * call still out): the next generation charges while the first charge may still land.
   */
  'release-while-unknown': {
    file: 'db/jobKeyRelease.js',
    from: 'AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = jobs.id AND attempt_may_take_effect(a))',
    to: 'AND true',
    migration: 'DROP TRIGGER jobs_release_only_when_settled ON jobs;',
    // The model-based test never releases a key.
    caughtBy: ['campaign'],
  },
  /**
   * Retries switched off: an exclusive job's failed attempt is never tried again on its provider,
   * whatever its failure; the plan moves on at once, and a job whose last provider meets a storm
   * or an outage fails though a retry was left.
   */
  'retries-off': {
    file: 'workflows/retryPolicy.js',
    from: "if (plan.mode !== 'exclusive' || failed.state !== 'failed' || !failure)",
    to: 'if (plan.mode !== undefined)',
    migration: undefined,
    // The model-based test's providers run without retries (test/support/stack.ts).
    caughtBy: ['campaign'],
  },
  /**
   * A read of a job whose database is out of reach says there is no such job (`404`) instead
   * of the documented `503`: its owner, told the job does not exist, would start the work again.
   */
  'unreachable-database-as-not-found': {
    file: 'service/jobs.js',
    from: '(deps.pool, ownerId, jobId);',
    to: '(deps.pool, ownerId, jobId).catch(() => undefined);',
    migration: undefined,
    // The model-based test never takes PostgreSQL away from the API.
    caughtBy: ['campaign'],
  },
  /**
   * Issue 54's bug: an execution of a call that did not begin it (a run terminated and taken up
   * again, a reset, a task delivered twice) finds the attempt `running`, takes the begin's silence
   * for a job it cannot read, and writes `failed` / `no_contract` ("nothing was sent") over the
   * live call, its end with it, as the code before the call token did. The token is read from the
   * row, as no fence stood in the way then; the call's own answer then finds its end written, and
   * the charge it made is hidden (with a fallback in the plan, the fallback charges again).
   */
  'begin-returns-nothing': {
    file: 'activities/providerCallBegin.js',
    from: 'throw (0, failures_1.typedFailure)(',
    to:
      "return (0, results_1.attemptOutcome)(pool, await (0, attemptSettlement_1.endCallWithoutResult)(pool, attempt.id, (await pool.query('SELECT call_token FROM attempts WHERE id = $1', [attempt.id])).rows[0].call_token, { outcome: 'failed' }, { state: 'failed', error: { code: 'no_contract', message: `job type of ${attempt.id} is unknown; nothing was sent` } })); " +
      'throw (0, failures_1.typedFailure)(',
    migration: undefined,
    // The model-based test never runs one call twice.
    caughtBy: ['campaign'],
  },
  /**
   * Replays sent after the provider's key window: the trigger that refuses a replay's begin at or
   * after `replay_until` skips that test (it still writes the replay's begin and `lands_by`, marks
   * the attempt's `replay_lands_by`, and refuses a replay with nothing kept, of a settled attempt
   * or an ended job). The look goes on replaying an unknown attempt whose window is over, and a
   * provider that has forgotten the key by then charges again.
   */
  'replay-after-window': {
    migration: {
      function: 'attempt_replays_only_inside_the_key_window',
      from: 'IF clock_timestamp() >= kept.replay_until THEN',
      to: 'IF false THEN',
    },
    // The model-based test has no replay provider.
    caughtBy: ['campaign'],
  },
  /**
   * A call that ended with no cost known counts as costing nothing (the reservation schemes
   * issue 60 names release on any error, a timeout that may still bill included): every payment
   * attempt's reservation, which has no cost reported, settles at 0 once its attempt ends.
   */
  'budget-forgets-uncosted-calls': {
    migration: {
      function: 'attempt_counted_cost',
      from: 'WHEN a.finished_at IS NOT NULL AND a.started_at IS NULL THEN 0',
      to: 'WHEN a.finished_at IS NOT NULL AND a.cost IS NULL THEN 0',
    },
    // The model-based test keeps no budgets.
    caughtBy: ['campaign'],
  },
} satisfies Record<string, Plant>;

export type PlantedBug = keyof typeof PLANTS;

export const PLANTED_BUGS: Readonly<Record<PlantedBug, Plant>> = PLANTS;

/** The planted bugs that edit a file of the product at a marked site. */
export const SITED_BUGS = (Object.keys(PLANTS) as PlantedBug[]).filter(
  (bug) => PLANTED_BUGS[bug].file !== undefined,
);

/**
 * Copies the compiled service (dist) and its migrations into `dir`, plants `bug`, and returns
 * the copy's compiled product (its dist/src) for `--build`. Fails if the code to change is not found, so a
 * refactoring cannot silently turn the planted bug into no bug at all.
 */
export function buildWithPlantedBug(bug: PlantedBug, dir: string): string {
  return buildWithPlantedBugs([bug], dir);
}

/**
 * The same with several bugs planted in one copy: for bugs whose sites differ (another file, or
 * a migration of their own), so that one campaign against the copy can meet each.
 */
export function buildWithPlantedBugs(bugs: readonly PlantedBug[], dir: string): string {
  const plants = bugs.map((bug) => PLANTED_BUGS[bug]);
  const files = plants.flatMap((plant) => (plant.file === undefined ? [] : [plant.file]));
  if (bugs.length === 0 || new Set(files).size !== files.length)
    throw new Error(`cannot plant ${bugs.join(' and ')} in one copy: give bugs whose files differ`);
  mkdirSync(dir, { recursive: true });
  const dist = path.join(dir, 'dist');
  cpSync(path.join(ROOT, 'dist'), dist, { recursive: true });
  cpSync(path.join(ROOT, 'migrations'), path.join(dir, 'migrations'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const product = path.join(dist, 'src');
  for (const [index, bug] of bugs.entries()) {
    const plant = PLANTED_BUGS[bug];
    if (plant.file !== undefined) {
      const file = path.join(product, plant.file);
      writeFileSync(file, plantAtSite(bug, readFileSync(file, 'utf8')));
    }
    const migration = plantedMigration(bug);
    // One migration a bug, after the copy's own, in the order given.
    if (migration)
      writeFileSync(
        path.join(dir, 'migrations', `${9999 - bugs.length + 1 + index}_planted_bug.sql`),
        `${migration}\n`,
      );
  }
  // Workers load the prebuilt workflow bundle (src/temporal/workflowBundle.ts): the checkout's serves
  // when no planted file is in it; else the copy's is bundled once, here, rather than by
  // every worker at every start.
  if (files.some((file) => bundleHolds(product, file))) bundleWorkflows(product);
  return product;
}

/** The SQL a planted bug adds after the copy's migrations, if any. */
export function plantedMigration(
  bug: PlantedBug,
  migrations = path.join(ROOT, 'migrations'),
): string | undefined {
  const { migration } = PLANTED_BUGS[bug];
  if (migration === undefined || typeof migration === 'string') return migration;
  const definition = latestDefinition(migration.function, migrations);
  const found = definition.match(codePattern(migration.from, 'g')) ?? [];
  if (found.length !== 1)
    throw new Error(
      `cannot plant ${bug}: ${JSON.stringify(migration.from)} occurs ${found.length} times in ${migration.function}, not once`,
    );
  return definition
    .replace(codePattern(migration.from), () => migration.to)
    .replace(/^CREATE\s+(OR\s+REPLACE\s+)?FUNCTION/i, 'CREATE OR REPLACE FUNCTION');
}

/**
 * The text of the last `CREATE [OR REPLACE] FUNCTION name` among the migrations (in the order
 * they run), up to the end of its dollar-quoted body and its semicolon.
 */
export function latestDefinition(name: string, migrations: string): string {
  const start = new RegExp(`CREATE\\s+(?:OR\\s+REPLACE\\s+)?FUNCTION\\s+${name}\\s*\\(`, 'gi');
  let latest: string | undefined;
  for (const file of readdirSync(migrations)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    const sql = readFileSync(path.join(migrations, file), 'utf8');
    for (const match of sql.matchAll(start)) {
      // The body is dollar-quoted ($$ or $tag$): the definition ends at the `;` after its close.
      const rest = sql.slice(match.index);
      const quote = /\$\w*\$/.exec(rest);
      const close = quote ? rest.indexOf(quote[0], quote.index + quote[0].length) : -1;
      const end = close === -1 ? -1 : rest.indexOf(';', close);
      if (end === -1) throw new Error(`${file}: the definition of ${name} does not end`);
      latest = rest.slice(0, end + 1);
    }
  }
  if (latest === undefined) throw new Error(`no migration defines the function ${name}`);
  return latest;
}

/** `code` as a pattern that matches it whatever whitespace a formatter put between its words. */
export function codePattern(code: string, flags = ''): RegExp {
  const words = code
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(words.join('\\s+'), flags);
}

/**
 * `source` with `bug` planted: `from` replaced by `to` at the first place after the bug's marker
 * (within SITE_REACH characters), whitespace matching any whitespace. Throws when the marker is
 * missing or not alone, or `from` is not found after it, so a refactoring cannot silently turn
 * the planted bug into no bug at all.
 */
export function plantAtSite(bug: PlantedBug, source: string): string {
  const { file, from, to } = PLANTED_BUGS[bug];
  if (file === undefined || from === undefined || to === undefined)
    throw new Error(`cannot plant ${bug}: it has no site in the product`);
  const marker = `${PLANT_MARKER}${bug}\n`;
  const at = source.indexOf(marker);
  if (at === -1 || source.indexOf(marker, at + 1) !== -1)
    throw new Error(`cannot plant ${bug}: ${file} must mark its site once with "${marker.trim()}"`);
  const start = at + marker.length;
  const found = codePattern(from).exec(source.slice(start, start + SITE_REACH));
  if (!found)
    throw new Error(
      `cannot plant ${bug}: ${JSON.stringify(from)} is not right after its site in ${file}`,
    );
  const index = start + found.index;
  return `${source.slice(0, index)}${to}${source.slice(index + found[0].length)}`;
}

/**
 * Whether the prebuilt bundle in `product` (webpack's, whose module ids name their files) holds
 * `file`. A missing bundle, or one whose ids cannot be read, counts as holding it: rebundled.
 */
function bundleHolds(product: string, file: string): boolean {
  const bundle = path.join(product, 'temporal', 'workflow-bundle.js');
  if (!existsSync(bundle)) return true;
  const code = readFileSync(bundle, 'utf8');
  const listed = (name: string): boolean => code.includes(`src/${name}"`);
  return !listed('workflows/jobWorkflow.js') || listed(file);
}

/** The copy's own `npm run build` bundling step, run on its planted workflow code. */
function bundleWorkflows(product: string): void {
  const run = spawnSync(process.execPath, [path.join(product, 'temporal', 'bundleWorkflows.js')], {
    encoding: 'utf8',
  });
  if (run.status !== 0)
    throw new Error(`bundling the planted workflow code failed:\n${run.stderr}${run.stdout}`);
}
