import { clearUnusedFaults } from './stack';

// Whatever a test queued at the simulator and did not use up must not meet the next test.
afterEach(() => clearUnusedFaults());
