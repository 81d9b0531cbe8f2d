import { abandonUnfinishedStarts, clearUnusedFaults } from './stack';

// Whatever a test queued at the simulator and did not use up must not meet the next test.
afterEach(() => clearUnusedFaults());

// A stack start still going after the file's tests is one Jest gave up on (a hook or test timed
// out): it must stop what it started, or a worker it left would keep Jest (and CI) waiting.
afterAll(() => abandonUnfinishedStarts());
