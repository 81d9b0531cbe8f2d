import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { CampaignReport } from '../tools/chaos/campaign';
import { buildWithPlantedBugs, type PlantedBug } from '../tools/chaos/plantedBugs';
import { runChaos } from './support/chaos';
import { harness, TEST_OUTPUT } from './support/harness';
import { byLength } from './support/lengths';

/**
 * The campaign can find what it looks for: each bug is planted in a throwaway copy of the
 * compiled service, and a campaign against that copy must report it, by a violation only that
 * bug makes, with the seed that replays it, and fail. Every campaign here runs one seed with the
 * same arguments, and so does one against the clean build, which must break nothing: what the
 * planted runs report comes from their plants, not from the seed or the machine.
 *
 * In `npm test` each campaign is its opening only: a job aimed at each provider quirk behind a
 * planted bug, one at a time (but for four long waits on providers of their own, side by side),
 * so that every plant meets its job whatever the machine's speed.
 * `npm run test:long` adds a minute and a half of seeded traffic, where a plant must also show
 * among random work.
 *
 * Two plants share a copy and its campaign (SHARED): each has a site of its own (a file, a
 * migration), and the opening meets each at a step of its own that the other does not touch, so
 * each still makes the violation only it makes.
 */
const SEED = 7001;
const ARGS = [
  '--seed',
  String(SEED),
  ...byLength({ short: ['--opening-only'], long: ['--minutes', '1.5'] }),
  '--fault-every',
  '0',
];

/**
 * Campaigns at once. An opening runs one job at a time and mostly waits on providers, timers
 * and operators' patience, so four share two cores; with seeded traffic (eight lanes each), two
 * at once is the most a busy machine takes before workflow tasks time out and hedges start too
 * late to race, and the planted bugs hide (measured).
 */
const AT_ONCE = byLength({ short: 4, long: 2 });

/** Each plant, the invariant it breaks, and what only that plant makes the campaign report. */
const CASES: Array<[PlantedBug, number, RegExp]> = [
  // A late hedge overwrites the winner: two winners, or a recorded outcome that changed.
  ['cas-without-guard', 2, /has [2-9] succeeded attempts|outcome changed/],
  // A charge that may have happened counts as failed, by a clock, and it had happened.
  [
    'unknown-as-failed',
    5,
    /failed \(\w+\) although its charge may have happened and nothing settled it; the provider's ledger shows the charge/,
  ],
  // "No record under our key" outranks a 2xx: a charge filed under the provider's own id counts
  // as never made, so the fallback charges again, or the key is released as uncharged.
  [
    'not-found-outranks-2xx',
    4,
    /was charged 2 times|was released with no charge recorded, and was charged/,
  ],
  // A key released while its charge was unknown: the charge lands after the release.
  ['release-while-unknown', 4, /released while attempt .* could still take effect/],
  // A database out of reach taken for "no such job": the opening's read through a replica whose
  // link to PostgreSQL is cut answers 404 to the job's owner.
  ['unreachable-database-as-not-found', 1, /was answered 404 to its owner/],
  // Retries switched off: a job whose last provider met a storm or an outage fails at its first
  // refusal, with tries left on that provider.
  [
    'retries-off',
    9,
    /failed \(\w+; .*\), its try \d of 3 in a row there.*a retry was left, and none was scheduled/,
  ],
  // A second execution of a call (the opening's terminated run taken up by startJob, and its
  // reset run) writes "failed, nothing was sent" over the charge in flight: the provider's ledger
  // holds the charge, and the job's answer hides it.
  [
    'begin-returns-nothing',
    10,
    /was charged \(its provider's ledger holds the key\), but its job answers \w+.* failed \(no_contract\): a charge that happened, hidden/,
  ],
  // Replays past the key window: the opening's short-window charge, processed past its window,
  // is replayed after it (the only way its stored answer comes back), and the replay's row shows
  // its begin at or after its attempt's replay_until.
  ['replay-after-window', 11, /a replay of attempt \S+ began at \S+, at or after its window's end/],
  // A call with no cost known counts as nothing: the opening owner's payment attempts give their
  // reservations back when they end, though they may have billed.
  [
    'budget-forgets-uncosted-calls',
    12,
    /attempt \S+ \(\w+\) counts for 0\.3 but its reservation in budget \d+ was settled at 0/,
  ],
];

/**
 * Plants that share one copy and one campaign, each caught at its own step of the opening: the
 * read through the replica cut from PostgreSQL (the API's read path: service/jobs.js), and the
 * short-window charge replayed past its window later on (a migration redefining the replay
 * begin's trigger). Neither step sends what the other plant changes. Likewise the retry after
 * the opening's 429 (a compiled file) and what any ended payment attempt counts for in its
 * owner's budget (a migration): settling a reservation changes no job's course. Ten campaigns,
 * four at once, would take three rounds; eight take two.
 */
const SHARED: PlantedBug[][] = [
  ['unreachable-database-as-not-found', 'replay-after-window'],
  ['retries-off', 'budget-forgets-uncosted-calls'],
];

/** The campaigns: each shared group, each other plant alone, and the clean build (no plant). */
const CAMPAIGNS: PlantedBug[][] = [
  ...SHARED,
  ...CASES.map(([bug]) => bug)
    .filter((bug) => !SHARED.flat().includes(bug))
    .map((bug) => [bug]),
  [],
];
const labelOf = (bugs: PlantedBug[]): string => (bugs.length === 0 ? 'clean' : bugs.join('+'));
const campaignOf = (bug: PlantedBug): string =>
  labelOf(CAMPAIGNS.find((bugs) => bugs.includes(bug))!);

interface Run {
  code: number | null;
  output: string;
  report: CampaignReport | undefined;
}

/**
 * The campaign against a build with `bugs` planted, or the clean one (none). The planted runs
 * take no process faults, so they use the test run's PostgreSQL server (each its own database)
 * instead of starting one each.
 */
async function campaign(bugs: PlantedBug[]): Promise<Run> {
  const dir = mkdtempSync(path.join(TEST_OUTPUT, `chaos-${labelOf(bugs)}-`));
  const build = bugs.length > 0 ? buildWithPlantedBugs(bugs, path.join(dir, 'build')) : undefined;
  const run = await runChaos(
    [...ARGS, ...(build ? ['--build', build] : []), '--dir', dir],
    path.join(dir, 'report.json'),
    // No process faults: the test run's PostgreSQL and Temporal servers serve every campaign
    // (each its own database and task queue) instead of one started per campaign.
    { DATABASE_URL: harness().adminDatabaseUrl, TEMPORAL_ADDRESS: harness().temporalAddress },
  );
  await dropCampaignDatabase(run.output);
  return run;
}

/**
 * Drops the database the campaign made on the test run's server, as a campaign's own server is
 * removed with its data; the report, the journal and every log stay in the run's folder.
 */
async function dropCampaignDatabase(output: string): Promise<void> {
  const name = /database (onejob_chaos_[0-9a-z_]+),/.exec(output)?.[1];
  if (!name) return;
  const admin = new pg.Client({ connectionString: harness().adminDatabaseUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Runs each piece of work, at most `n` at a time, in order; one promise per piece. */
function atMost<T>(n: number, works: Array<() => Promise<T>>): Array<Promise<T>> {
  let running = 0;
  const waiting: Array<() => void> = [];
  const turn = async (): Promise<void> => {
    if (running >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
  };
  const done = (): void => {
    running -= 1;
    waiting.shift()?.();
  };
  return works.map(async (work) => {
    await turn();
    try {
      return await work();
    } finally {
      done();
    }
  });
}

const runs = new Map<string, Promise<Run>>();
beforeAll(() => {
  const started = atMost(
    AT_ONCE,
    CAMPAIGNS.map((bugs) => () => campaign(bugs)),
  );
  CAMPAIGNS.forEach((bugs, index) => {
    const label = labelOf(bugs);
    const run = started[index]!;
    // Awaited by its test; until then a failure must not count as unhandled.
    run.catch(() => undefined);
    runs.set(label, run);
  });
});

async function finished(label: string): Promise<CampaignReport & { run: Run }> {
  const run = await runs.get(label)!;
  if (!run.report) throw new Error(`the campaign wrote no report:\n${run.output}`);
  return { ...run.report, run };
}

test.each(CASES)(
  `a campaign against a build with the planted bug %s (alone, or beside a plant SHARED says the opening meets elsewhere) reports invariant %i with that bug's signature and the seed (${SEED}), and fails`,
  async (bug, invariant, signature) => {
    const { violations, run } = await finished(campaignOf(bug));
    expect(violations.filter((v) => v.invariant === invariant)).toContainEqual(
      expect.objectContaining({ message: expect.stringMatching(signature) }),
    );
    expect(run.output).toContain(`VIOLATION(S) with seed ${SEED}`);
    expect(run.output).toContain(`npm run chaos -- --seed ${SEED}`);
    expect(run.code).toBe(1);
  },
  15 * 60_000,
);

test(
  `the same campaign (seed ${SEED}) against the clean build breaks no invariant`,
  async () => {
    const { violations, providerFaults, run } = await finished('clean');
    expect(violations.map((v) => `[${v.invariant}] ${v.message}`)).toEqual([]);
    // It met every quirk the plants are caught by, and still broke nothing.
    for (const quirk of ['fail_after', 'files_under_own_id', 'rate_limited', 'hold', 'delay'])
      expect(providerFaults).toHaveProperty(quirk);
    expect(run.code).toBe(0);
  },
  15 * 60_000,
);
