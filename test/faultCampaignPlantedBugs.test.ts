import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { buildWithPlantedBug, type PlantedBug } from '../src/chaos/plantedBugs';
import { TEST_OUTPUT } from './harness';
import { runChaos } from './support/chaos';

/**
 * The campaign can find what it looks for: each bug is planted in a throwaway copy of the
 * compiled service, and a short campaign against that copy must report it, with the seed that
 * replays it, and fail.
 */
const CASES: Array<[PlantedBug, number, number, RegExp]> = [
  // A late hedge overwrites the winner: two winners, a changed result.
  ['cas-without-guard', 2, 7001, /./],
  // A charge that may have happened counts as failed, by a clock: no evidence settled it.
  ['unknown-as-failed', 5, 7002, /./],
  // "No record under our key" outranks a 2xx: a charge filed under the provider's own id fails,
  // and the fallback charges again.
  ['not-found-outranks-2xx', 4, 7003, /charged 2 times/],
  // A key released while its charge was unknown: the charge lands after the release.
  ['release-while-unknown', 4, 7004, /released while attempt .* could still take effect/],
];

test.each(CASES)(
  'a campaign against a build with the planted bug %s reports invariant %i with its seed and fails',
  async (bug, invariant, seed, message) => {
    const dir = mkdtempSync(path.join(TEST_OUTPUT, `chaos-${bug}-`));
    const build = buildWithPlantedBug(bug, path.join(dir, 'build'));
    const { code, output, report } = await runChaos(
      [
        '--seed',
        String(seed),
        '--minutes',
        '1.5',
        '--fault-every',
        '0',
        '--build',
        build,
        '--dir',
        dir,
      ],
      path.join(dir, 'report.json'),
    );
    if (!report) throw new Error(`the campaign wrote no report:\n${output}`);
    expect(report.violations.filter((v) => v.invariant === invariant)).toContainEqual(
      expect.objectContaining({ message: expect.stringMatching(message) }),
    );
    expect(output).toContain(`VIOLATION(S) with seed ${seed}`);
    expect(output).toContain(`npm run chaos -- --seed ${seed}`);
    expect(code).toBe(1);
  },
  10 * 60_000,
);
