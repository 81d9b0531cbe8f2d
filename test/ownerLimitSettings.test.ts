import { apiConfig } from '../src/config';
import { DEFAULTS } from '../src/domain/defaults';
import { limitsOf, ownerLimitSettings } from '../src/domain/ownerLimits';
import { TEST_SECRET_KEYS } from './support/identities';

/** How the owner-limit settings read: defaults, per-owner overrides, and refusals at start. */
const base = {
  DATABASE_URL: 'postgres://x',
  ONEJOB_API_TOKENS: 'a:token-aaaaaaaa',
  ONEJOB_SECRET_KEYS: TEST_SECRET_KEYS,
};

test('owner limits are on unless set off: unset, every owner gets the defaults, and npm start’s are sized for trying things out', () => {
  const d = DEFAULTS.ownerLimits;
  expect(limitsOf(apiConfig(base).ownerLimits, 'anyone')).toEqual({
    creates: { perSecond: d.createsPerSecond, burst: d.createBurst },
    maxOpenJobs: d.maxOpenJobs,
    webhookRequests: { perSecond: d.webhookRequestsPerSecond, burst: d.webhookRequestBurst },
  });
  const dev = DEFAULTS.devOwnerLimits;
  expect(limitsOf(ownerLimitSettings({}, true), 'anyone')).toEqual({
    creates: { perSecond: dev.createsPerSecond, burst: dev.createBurst },
    maxOpenJobs: dev.maxOpenJobs,
    webhookRequests: { perSecond: dev.webhookRequestsPerSecond, burst: dev.webhookRequestBurst },
  });
});

test('each owner limit is lifted for every owner by setting it off', () => {
  const settings = ownerLimitSettings({
    ONEJOB_OWNER_CREATES_PER_SECOND: 'off',
    ONEJOB_OWNER_MAX_OPEN_JOBS: 'off',
    ONEJOB_OWNER_WEBHOOK_REQUESTS_PER_SECOND: 'off',
  });
  expect(limitsOf(settings, 'anyone')).toEqual({});
});

test('an owner named in ONEJOB_OWNER_LIMITS gets its own limits; a field left out takes the default and null lifts it', () => {
  const settings = ownerLimitSettings({
    ONEJOB_OWNER_CREATES_PER_SECOND: '2.5',
    ONEJOB_OWNER_MAX_OPEN_JOBS: '100',
    ONEJOB_OWNER_WEBHOOK_REQUESTS_PER_SECOND: 'off',
    ONEJOB_OWNER_LIMITS: JSON.stringify({
      alice: { createsPerSecond: 5, createBurst: 20, webhookRequestsPerSecond: 2 },
      batch: { createsPerSecond: null, maxOpenJobs: null },
      small: { maxOpenJobs: 3 },
    }),
  });
  expect(limitsOf(settings, 'someone')).toEqual({
    creates: { perSecond: 2.5, burst: 3 },
    maxOpenJobs: 100,
  });
  expect(limitsOf(settings, 'alice')).toEqual({
    creates: { perSecond: 5, burst: 20 },
    maxOpenJobs: 100,
    webhookRequests: { perSecond: 2, burst: 2 },
  });
  expect(limitsOf(settings, 'batch')).toEqual({});
  expect(limitsOf(settings, 'small')).toEqual({
    creates: { perSecond: 2.5, burst: 3 },
    maxOpenJobs: 3,
  });
});

test.each([
  [{ ONEJOB_OWNER_CREATES_PER_SECOND: '0' }, /ONEJOB_OWNER_CREATES_PER_SECOND/],
  [
    { ONEJOB_OWNER_CREATES_PER_SECOND: 'off', ONEJOB_OWNER_CREATE_BURST: 'off' },
    /ONEJOB_OWNER_CREATE_BURST cannot be off/,
  ],
  [{ ONEJOB_OWNER_WEBHOOK_REQUEST_BURST: '0' }, /ONEJOB_OWNER_WEBHOOK_REQUEST_BURST/],
  [{ ONEJOB_OWNER_MAX_OPEN_JOBS: '1.5' }, /ONEJOB_OWNER_MAX_OPEN_JOBS/],
  [{ ONEJOB_OWNER_LIMITS: '{"alice":{"createsPerSecnd":5}}' }, /ONEJOB_OWNER_LIMITS/],
  [{ ONEJOB_OWNER_LIMITS: 'not json' }, /ONEJOB_OWNER_LIMITS/],
  [
    {
      ONEJOB_OWNER_CREATES_PER_SECOND: 'off',
      ONEJOB_OWNER_LIMITS: '{"alice":{"createBurst":5}}',
    },
    /createBurst needs a rate/,
  ],
])('a mistaken owner-limit setting %j stops the API at start', (env, message) => {
  expect(() => apiConfig({ ...base, ...env })).toThrow(message);
});
