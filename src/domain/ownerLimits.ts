import { z } from 'zod';

/** What one owner may take; undefined means no limit of that kind. */
export interface OwnerLimits {
  /** Create bucket: new jobs per second it refills by, and how many it holds. */
  creates?: { perSecond: number; burst: number };
  /** Jobs of the owner not yet ended, at most. */
  maxOpenJobs?: number;
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
});
const overrides = z.record(z.string().min(1), ownerOverride);

function optionalNumber(
  env: NodeJS.ProcessEnv,
  name: string,
  valid: (value: number) => boolean,
  rule: string,
): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!valid(value)) throw new Error(`${name} must be ${rule}, got "${raw}"`);
  return value;
}

/** A bucket's size when only its rate is given: one second's worth, and at least one create. */
const burstFor = (perSecond: number): number => Math.max(1, Math.ceil(perSecond));

/**
 * ONEJOB_OWNER_CREATES_PER_SECOND, ONEJOB_OWNER_CREATE_BURST and ONEJOB_OWNER_MAX_OPEN_JOBS set
 * every owner's limits; ONEJOB_OWNER_LIMITS (JSON) sets some owners' apart. Unset: no limits.
 */
export function ownerLimitSettings(env: NodeJS.ProcessEnv): OwnerLimitSettings {
  const perSecond = optionalNumber(
    env,
    'ONEJOB_OWNER_CREATES_PER_SECOND',
    (value) => Number.isFinite(value) && value > 0,
    'a number of creates per second above 0',
  );
  const burst = optionalNumber(
    env,
    'ONEJOB_OWNER_CREATE_BURST',
    (value) => Number.isInteger(value) && value >= 1,
    'a whole number of at least 1',
  );
  if (burst !== undefined && perSecond === undefined)
    throw new Error('ONEJOB_OWNER_CREATE_BURST needs ONEJOB_OWNER_CREATES_PER_SECOND');
  const maxOpenJobs = optionalNumber(
    env,
    'ONEJOB_OWNER_MAX_OPEN_JOBS',
    (value) => Number.isInteger(value) && value >= 1,
    'a whole number of at least 1',
  );
  const defaults: OwnerLimits = {
    ...(perSecond === undefined
      ? {}
      : { creates: { perSecond, burst: burst ?? burstFor(perSecond) } }),
    ...(maxOpenJobs === undefined ? {} : { maxOpenJobs }),
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
    const rate =
      given.createsPerSecond === undefined ? defaults.creates?.perSecond : given.createsPerSecond;
    const size =
      given.createBurst ??
      (given.createsPerSecond === undefined ? defaults.creates?.burst : undefined);
    if (given.createBurst !== undefined && (rate === null || rate === undefined))
      throw new Error(`ONEJOB_OWNER_LIMITS: ${owner}'s createBurst needs a createsPerSecond`);
    const open = given.maxOpenJobs === undefined ? defaults.maxOpenJobs : given.maxOpenJobs;
    owners[owner] = {
      ...(rate === null || rate === undefined
        ? {}
        : { creates: { perSecond: rate, burst: size ?? burstFor(rate) } }),
      ...(open === null || open === undefined ? {} : { maxOpenJobs: open }),
    };
  }
  return { defaults, owners };
}

/** The limits that hold for one owner. */
export function limitsOf(settings: OwnerLimitSettings | undefined, ownerId: string): OwnerLimits {
  if (!settings) return {};
  return Object.hasOwn(settings.owners, ownerId) ? settings.owners[ownerId]! : settings.defaults;
}
