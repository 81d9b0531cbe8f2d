import { z } from 'zod';
import { DEFAULTS } from './defaults';

/** A token bucket: `perSecond` tokens refill it, up to `burst`. */
export interface Bucket {
  perSecond: number;
  burst: number;
}

/** What one owner may take; undefined means no limit of that kind. */
export interface OwnerLimits {
  /** Create bucket: new jobs per second it refills by, and how many it holds. */
  creates?: Bucket;
  /** Jobs of the owner not yet ended, at most. */
  maxOpenJobs?: number;
  /** Requests to the webhook routes (register, rotate, list, deliveries…). */
  webhookRequests?: Bucket;
}

/** The limits of every owner: a default, and the owners configured apart from it. */
export interface OwnerLimitSettings {
  defaults: OwnerLimits;
  owners: Record<string, OwnerLimits>;
}

// null lifts a default for that owner; a field left out takes the default.
const ownerOverride = z.strictObject({
  createsPerSecond: z.number().positive().nullable().optional(),
  createBurst: z.number().int().min(1).optional(),
  maxOpenJobs: z.number().int().min(1).nullable().optional(),
  webhookRequestsPerSecond: z.number().positive().nullable().optional(),
  webhookRequestBurst: z.number().int().min(1).optional(),
});
const overrides = z.record(z.string().min(1), ownerOverride);

/** A number setting: its value, `off`, or the fallback when unset. */
function limitSetting(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  valid: (value: number) => boolean,
  rule: string,
): number | 'off' {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'off') return 'off';
  const value = Number(raw);
  if (!valid(value)) throw new Error(`${name} must be ${rule} or off, got "${raw}"`);
  return value;
}

const positive = (value: number): boolean => Number.isFinite(value) && value > 0;
const wholeAtLeastOne = (value: number): boolean => Number.isInteger(value) && value >= 1;

/** A bucket from its rate and size settings; none when the rate is off. */
function bucketSetting(
  env: NodeJS.ProcessEnv,
  names: { rate: string; burst: string },
  fallback: Bucket,
): Bucket | undefined {
  const perSecond = limitSetting(env, names.rate, fallback.perSecond, positive, 'a number above 0');
  const burst = limitSetting(env, names.burst, fallback.burst, wholeAtLeastOne, 'a whole number');
  if (burst === 'off') throw new Error(`${names.burst} cannot be off; set ${names.rate}=off`);
  if (perSecond === 'off') return undefined;
  // A rate set without a size gets one second of it (at least one), not the default's size.
  const set = (name: string) => env[name] !== undefined && env[name] !== '';
  return { perSecond, burst: set(names.rate) && !set(names.burst) ? burstFor(perSecond) : burst };
}

/** A bucket's size when only its rate is given: one second's worth, and at least one. */
const burstFor = (perSecond: number): number => Math.max(1, Math.ceil(perSecond));

/** An owner's own bucket: its rate (null: none) and size, the default where left out. */
function ownBucket(
  owner: string,
  rate: number | null | undefined,
  burst: number | undefined,
  fallback: Bucket | undefined,
  field: string,
): Bucket | undefined {
  if (rate === null) {
    if (burst !== undefined)
      throw new Error(`ONEJOB_OWNER_LIMITS: ${owner}'s ${field}Burst needs a rate`);
    return undefined;
  }
  if (rate === undefined) {
    if (burst === undefined) return fallback;
    if (!fallback) throw new Error(`ONEJOB_OWNER_LIMITS: ${owner}'s ${field}Burst needs a rate`);
    return { perSecond: fallback.perSecond, burst };
  }
  return { perSecond: rate, burst: burst ?? burstFor(rate) };
}

/**
 * Every owner's limits, on by default: ONEJOB_OWNER_CREATES_PER_SECOND and
 * ONEJOB_OWNER_CREATE_BURST (new jobs), ONEJOB_OWNER_MAX_OPEN_JOBS, and
 * ONEJOB_OWNER_WEBHOOK_REQUESTS_PER_SECOND and ONEJOB_OWNER_WEBHOOK_REQUEST_BURST (the webhook
 * routes); `off` lifts one. ONEJOB_OWNER_LIMITS (JSON) sets some owners apart. Unset, the
 * defaults hold: DEFAULTS.ownerLimits, or DEFAULTS.devOwnerLimits in what npm start runs.
 */
export function ownerLimitSettings(env: NodeJS.ProcessEnv, devStack = false): OwnerLimitSettings {
  const fallback = devStack ? DEFAULTS.devOwnerLimits : DEFAULTS.ownerLimits;
  const creates = bucketSetting(
    env,
    { rate: 'ONEJOB_OWNER_CREATES_PER_SECOND', burst: 'ONEJOB_OWNER_CREATE_BURST' },
    { perSecond: fallback.createsPerSecond, burst: fallback.createBurst },
  );
  const maxOpenJobs = limitSetting(
    env,
    'ONEJOB_OWNER_MAX_OPEN_JOBS',
    fallback.maxOpenJobs,
    wholeAtLeastOne,
    'a whole number of at least 1',
  );
  const webhookRequests = bucketSetting(
    env,
    {
      rate: 'ONEJOB_OWNER_WEBHOOK_REQUESTS_PER_SECOND',
      burst: 'ONEJOB_OWNER_WEBHOOK_REQUEST_BURST',
    },
    { perSecond: fallback.webhookRequestsPerSecond, burst: fallback.webhookRequestBurst },
  );
  const defaults: OwnerLimits = {
    ...(creates ? { creates } : {}),
    ...(maxOpenJobs === 'off' ? {} : { maxOpenJobs }),
    ...(webhookRequests ? { webhookRequests } : {}),
  };
  const raw = env.ONEJOB_OWNER_LIMITS;
  if (raw === undefined || raw === '') return { defaults, owners: {} };
  let parsed: z.infer<typeof overrides>;
  try {
    parsed = overrides.parse(JSON.parse(raw));
  } catch (error) {
    throw new Error(
      `ONEJOB_OWNER_LIMITS must be JSON such as {"alice":{"createsPerSecond":5,"createBurst":20,"maxOpenJobs":100}}: ${(error as Error).message}`,
    );
  }
  const owners: Record<string, OwnerLimits> = {};
  for (const [owner, given] of Object.entries(parsed)) {
    const ownCreates = ownBucket(
      owner,
      given.createsPerSecond,
      given.createBurst,
      defaults.creates,
      'create',
    );
    const ownWebhooks = ownBucket(
      owner,
      given.webhookRequestsPerSecond,
      given.webhookRequestBurst,
      defaults.webhookRequests,
      'webhookRequest',
    );
    const open = given.maxOpenJobs === undefined ? defaults.maxOpenJobs : given.maxOpenJobs;
    owners[owner] = {
      ...(ownCreates ? { creates: ownCreates } : {}),
      ...(open === null || open === undefined ? {} : { maxOpenJobs: open }),
      ...(ownWebhooks ? { webhookRequests: ownWebhooks } : {}),
    };
  }
  return { defaults, owners };
}

/** The limits that hold for one owner. */
export function limitsOf(settings: OwnerLimitSettings | undefined, ownerId: string): OwnerLimits {
  if (!settings) return {};
  return Object.hasOwn(settings.owners, ownerId) ? settings.owners[ownerId]! : settings.defaults;
}
