const Sequencer = require('@jest/test-sequencer').default;

/**
 * With two test files at once, a run ends when its longest file does: the files that take
 * minutes start first, so the short ones fill the other worker around them. After them, jest's
 * own order (failed first, then by size). Measured on two cores, slowest first: the heavy files
 * (a part of their own, tools/stack/runTests.ts), then the rest.
 */
const SLOW_FIRST = [
  'faultCampaignPlantedBugs',
  'faultCampaign',
  'benchmarkSmoke',
  'protocolModel',
  'modelBased',
  'modelBasedPlantedBugs',
  'httpFuzz',
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
