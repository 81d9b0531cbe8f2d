const Sequencer = require('@jest/test-sequencer').default;

/**
 * With two test files at once, a run ends when its longest file does: the files that take
 * minutes start first, so the short ones fill the other worker around them. After them, jest's
 * own order (failed first, then by size). Measured on two cores, slowest first: the heavy files
 * (a part of their own, src/dev/runTests.ts), then the rest.
 *
 * The HTTP fuzzer goes before all of them. Run after the model-based planted runs in the same
 * jest process, its 1.1 MB bodies met connections closed with no answer in 3 of 4 runs (seeds
 * 928568133 and 931684688 among them); first, or alone, in none of 5. The cause is not found
 * yet: the same requests sent by hand are answered and the connection kept.
 */
const SLOW_FIRST = [
  'httpFuzz',
  'faultCampaignPlantedBugs',
  'faultCampaign',
  'benchmarkSmoke',
  'protocolModel',
  'modelBased',
  'modelBasedPlantedBugs',
  'workerCrash',
  'unknownSettlement',
  'hedging',
  'database',
  'waits',
  'sideEffectCertainty',
  'certification',
  'attempts',
  'httpBounds',
  'temporalNative',
];

function rank(testPath) {
  const name = require('node:path').basename(testPath, '.test.ts');
  const index = SLOW_FIRST.indexOf(name);
  return index === -1 ? SLOW_FIRST.length : index;
}

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    return [...ordered].sort((a, b) => rank(a.path) - rank(b.path));
  }
}

module.exports = SlowFirstSequencer;
