import type { Client } from '@temporalio/client';
import { signCallback, SIGNATURE_HEADER } from '../../src/api/signatures';
import type { Fault, FaultRule } from '../simulator/faults';
import { BROKE_OWNER } from './budgets';
import { asJob, type ChaosClient, type Via } from './client';
import type { Journal } from './journal';
import type { LinkFault } from './linkProxy';
import {
  pauseWhileActing,
  resetToLatestCall,
  startOnTemporal,
  terminateRun,
  type CallInFlight,
} from './nemesis';
import { openingMoney } from './openingMoney';
import { Random } from './random';
import { World, type Intent, type KeyRecord } from './world';

/** The kinds of operation a lane draws, with how often it draws each. */
export const OPERATION_WEIGHTS = {
  create: 20,
  duplicates: 8,
  replay: 8,
  reordered_replay: 4,
  mismatch: 5,
  temporal_race: 4,
  child: 2,
  try_again: 6,
  operator_resolve: 3,
  operator_cancel: 3,
  release_key: 3,
  temporal_cancel: 2,
  callback: 4,
  status: 10,
  list: 2,
  provider_fault: 14,
  rate_limit_storm: 2,
  provider_outage: 2,
  operator_nemesis: 2,
} as const;

export type OperationKind = keyof typeof OPERATION_WEIGHTS;

/** Who the campaign acts as, and where it reaches everything. */
export interface Actors {
  client: ChaosClient;
  journal: Journal;
  world: World;
  temporal: Client;
  taskQueue: string;
  /** Owner → API token. */
  owners: Record<string, string>;
  operatorToken: string;
  /** Provider name → its callback secret. */
  callbackSecrets: Record<string, string>;
  /** [0]: chat and `simulator-pay`; [1]: `simulator-pay-2`; [2]: `simulator-pay-replay`, `simulator-pay-search`. */
  simulatorUrls: string[];
  /**
   * The payment providers (side effects), each with the simulator that serves it: the first two
   * have a status lookup by key and a callback secret; `simulator-pay-replay` settles a lost
   * answer by replaying its first request, `simulator-pay-search` by a search that lags.
   */
  paymentProviders: string[];
  paymentSimulators: Readonly<Record<string, number>>;
  /** The Temporal server pauses workflows (1.30+): the operator nemesis pauses runs too. */
  pausesWorkflows?: boolean;
  /** Starts a parent workflow that starts the job as its child (see parentWorkflow.ts). */
  startChildJob?: (record: KeyRecord) => Promise<{ workflowId: string }>;
  /**
   * The provider calls out right now (attempts `running` on open jobs), read from the service's
   * rows as an operator's console would show them: what the operator nemesis picks from.
   */
  callsInFlight?: () => Promise<CallInFlight[]>;
}

const CHAT_MODELS = ['sim-steady', 'sim-backup'] as const;

/** The chat providers of the first simulator, and the model each serves there. */
const CHAT_PROVIDERS: Record<string, (typeof CHAT_MODELS)[number]> = {
  simulator: 'sim-steady',
  'simulator-backup': 'sim-backup',
};
const CHAT_PROVIDER_NAMES = Object.keys(CHAT_PROVIDERS);

/** The index of the simulator that serves a payment provider's charges. */
export function simulatorIndexOf(
  actors: Pick<Actors, 'paymentSimulators'>,
  provider: string,
): number {
  return actors.paymentSimulators[provider] ?? 0;
}

/** The simulator that serves a payment provider's charges. */
export function simulatorOf(actors: Actors, provider: string): string {
  return actors.simulatorUrls[simulatorIndexOf(actors, provider)] ?? actors.simulatorUrls[0]!;
}

/** The payment providers with a status lookup by key (and a callback secret): the opening's. */
const LOOKUP_PAYMENT_PROVIDERS = ['simulator-pay', 'simulator-pay-2'] as const;
/** The payment provider that settles a lost answer by replaying its request (issue 59). */
export const REPLAY_PROVIDER = 'simulator-pay-replay';
/** The payment provider whose lookup is a search that lags its writes. */
export const SEARCH_PROVIDER = 'simulator-pay-search';
/**
 * A replay provider whose key window closes within seconds (stack.ts): only the opening sends it
 * a charge, whose window closes while the charge is still being processed.
 */
export const SHORT_WINDOW_REPLAY_PROVIDER = 'simulator-pay-replay-short';

let keyCounter = 0;
function freshKey(random: Random, label: string): string {
  keyCounter += 1;
  return `chaos-${random.seed.toString(36)}-${label}-${keyCounter}-${random.int(0, 1e9).toString(36)}`;
}

/**
 * A hedged summary's primary, and the model that serves it: not the exclusive summaries'
 * primary. The hedge delay is the primary's p95 over its succeeded calls, and a slow primary
 * queued for a hedged job that an exclusive job's call meets instead succeeds slowly: on a
 * shared primary those soon push the hedge delay past the slow primaries, and races stop.
 */
const HEDGED_PRIMARY = { provider: 'simulator-backup', model: 'sim-backup' } as const;

/**
 * A new intent: a summary (exclusive or hedged) or a charge (always exclusive). Some exclusive
 * summaries have a single provider: with no fallback, only a retry on that provider saves them
 * from a storm or an outage (invariant 9).
 */
function newIntent(random: Random): Intent {
  const roll = random.next();
  if (roll < 0.35)
    return {
      type: 'summarize',
      input: { text: `Order ${random.int(1, 1e6)} shipped in ${random.int(1, 9)} boxes.` },
      providers:
        roll < 0.28 ? ['simulator', 'simulator-backup'] : [random.pick(CHAT_PROVIDER_NAMES)],
      mode: 'exclusive',
    };
  if (roll < 0.6)
    return {
      type: 'summarize',
      input: { text: `Ticket ${random.int(1, 1e6)}: the customer asks for a refund.` },
      providers: [HEDGED_PRIMARY.provider, 'simulator'],
      mode: 'hedged',
    };
  return {
    type: 'charge',
    input: {
      amountCents: random.int(100, 99_999),
      currency: random.pick(['EUR', 'USD', 'INR']),
      account: `acct-${random.int(1, 1e9).toString(36)}`,
    },
    providers: chargePlan(random),
    mode: 'exclusive',
  };
}

/**
 * A charge's providers: the two with a status lookup, in a seeded order (as before issue 59),
 * or the replay provider first (alone a fifth of the time: a lost answer has no fallback to hide
 * behind), or the lagging search first, each with a lookup provider as its fallback.
 */
function chargePlan(random: Random): string[] {
  const lookups = random.shuffle([...LOOKUP_PAYMENT_PROVIDERS]);
  const roll = random.next();
  if (roll < 0.4) return lookups;
  if (roll < 0.68) return [REPLAY_PROVIDER, lookups[0]!];
  if (roll < 0.75) return [REPLAY_PROVIDER];
  return [SEARCH_PROVIDER, lookups[0]!];
}

/**
 * A lost answer or a processing delay for a charge whose first provider looks its lost answers
 * up by replay or by a lagging search, aimed by its account (half of them): its answer dropped
 * after the work, its request dropped before any (the replay then does the work), or its work
 * taking 3.5–9 s, past the call's 3 s timeout, its answer lost with the caller gone. A replay
 * while the work goes on is answered 409 and looked at again.
 */
export function drawLookupFault(random: Random, intent: Intent): FaultRule | undefined {
  const first = intent.providers[0];
  const { account } = intent.input;
  if (intent.type !== 'charge' || typeof account !== 'string') return undefined;
  if (first !== REPLAY_PROVIDER && first !== SEARCH_PROVIDER) return undefined;
  if (!random.chance(0.5)) return undefined;
  const fault = random.pick<Fault>([
    { kind: 'drop_after' },
    { kind: 'drop_after' },
    { kind: 'drop_before' },
    { kind: 'delay', ms: random.int(3_500, 9_000) },
    { kind: 'delay', ms: random.int(3_500, 9_000), then: { kind: 'drop_after' } },
  ]);
  return { route: 'charge', account, fault };
}

/** The same intent written otherwise: keys in another order, other whitespace. */
export function reorderedJson(intent: Intent): string {
  const input = Object.fromEntries(Object.entries(intent.input).reverse());
  const body: Record<string, unknown> = { mode: intent.mode, providers: intent.providers };
  body.input = input;
  body.type = intent.type;
  return JSON.stringify(body, null, 3).replace(/\n/g, '\r\n\t');
}

function anyVia(random: Random): Via {
  return random.weighted({ lb: 4, api0: 1, api1: 1 });
}

/** A record the campaign already created (a 2xx named its job), or undefined. */
function createdRecord(actors: Actors, random: Random): KeyRecord | undefined {
  const { created } = actors.world;
  return created.length > 0 ? random.pick(created) : undefined;
}

function someJobId(actors: Actors, random: Random): string | undefined {
  const ids = actors.world.jobList;
  return ids.length > 0 ? random.pick(ids) : undefined;
}

/** Charge jobs an operator looks at before a release, at most. */
const RELEASE_LOOKS = 4;

/**
 * A key for an operator to release. Half the time the operator first looks for a charge whose
 * attempt may still take effect right now (the release the guard must refuse, and the one a
 * broken guard lets through): one `unknown` if it finds one (it stays so until reconciled),
 * else one still running (its call ends within its timeout). It looks at charges seen
 * `unknown` first, then charges not seen ended, the latest generation of each. Otherwise, or
 * if none is open, any created key.
 */
async function keyToRelease(
  actors: Actors,
  op: number,
  kind: OperationKind,
  random: Random,
): Promise<{ record: KeyRecord; jobId: string; open: boolean } | undefined> {
  const { world, client } = actors;
  if (random.chance(0.5)) {
    const latestCharge = (jobId: string): boolean => {
      const record = world.jobs.get(jobId);
      return record?.intent.type === 'charge' && World.latestJob(record) === jobId;
    };
    const seenUnknown = new Set(
      [...world.seenUnknown].map((attemptId) => attemptId.split(':')[0]!),
    );
    const notEnded = world.jobList.filter(
      (jobId) => !seenUnknown.has(jobId) && !world.snapshots.has(jobId),
    );
    const looks = [
      ...random.shuffle([...seenUnknown].filter(latestCharge)),
      ...random.shuffle(notEnded.filter(latestCharge)),
    ].slice(0, RELEASE_LOOKS);
    let running: { record: KeyRecord; jobId: string; open: boolean } | undefined;
    for (const jobId of looks) {
      const record = world.jobs.get(jobId)!;
      const answer = await client.send(op, kind, 'GET', `/v1/jobs/${jobId}`, {
        token: actors.owners[record.owner]!,
        owner: record.owner,
      });
      const states = new Set(asJob(answer.body)?.attempts.map((attempt) => attempt.state));
      if (states.has('unknown')) return { record, jobId, open: true };
      if (states.has('running')) running ??= { record, jobId, open: true };
    }
    if (running) return running;
  }
  const record = createdRecord(actors, random);
  const jobId = record && World.latestJob(record);
  return record && jobId ? { record, jobId, open: false } : undefined;
}

/** The kinds of operation that make a provider sick for a while, not for one call. */
export type ProviderTroubleKind = 'rate_limit_storm' | 'provider_outage';

/**
 * How long a storm or an outage lasts: long enough that a provider's retries may run out and its
 * breaker open, short enough that the jobs waiting for it end soon after traffic does.
 */
const TROUBLE_MS = { min: 2_000, max: 8_000 } as const;

/**
 * A provider that answers every call with the same failure for a few seconds: a rate-limit storm
 * (`429`, with a `Retry-After` of 1–3 s half the time) or an outage (`503`). The provider is a
 * chat model's route on the first simulator, or a payment provider's charge route on the
 * simulator that serves it.
 */
export function drawProviderTrouble(
  random: Random,
  kind: ProviderTroubleKind,
  paymentSimulators: Readonly<Record<string, number>>,
): { provider: string; simulator: number; rule: FaultRule } {
  const provider = random.pick([...CHAT_PROVIDER_NAMES, ...Object.keys(paymentSimulators)]);
  const forMs = random.int(TROUBLE_MS.min, TROUBLE_MS.max);
  const fault: Fault =
    kind === 'provider_outage'
      ? { kind: 'fail_before', status: 503, message: 'simulated outage' }
      : random.chance(0.5)
        ? { kind: 'rate_limited', retryAfterSeconds: random.int(1, 3) }
        : { kind: 'rate_limited' };
  const model = CHAT_PROVIDERS[provider];
  if (model) return { provider, simulator: 0, rule: { route: 'chat', model, forMs, fault } };
  return {
    provider,
    simulator: paymentSimulators[provider] ?? 0,
    rule: { route: 'charge', forMs, fault },
  };
}

/** A provider fault for the next matching call. */
export function drawProviderFault(
  random: Random,
  simulators: number,
): { rule: FaultRule; simulator: number } {
  const target = random.weighted({ chat: 5, charge: 5, status: 1 });
  if (target === 'status') {
    const fault: Fault = random.pick<Fault>([
      { kind: 'fail_before', status: 503 },
      { kind: 'delay', ms: random.int(200, 2_000) },
      { kind: 'drop_before' },
    ]);
    return { rule: { route: 'charge-status', fault }, simulator: random.int(0, simulators - 1) };
  }
  const common: Fault[] = [
    { kind: 'delay', ms: random.int(50, 1_500) },
    { kind: 'delay', ms: random.int(3_500, 6_000) },
    { kind: 'hang' },
    { kind: 'fail_before', status: random.pick([400, 429, 500, 503]) },
    { kind: 'fail_after', status: random.pick([500, 502]) },
    { kind: 'drop_before' },
    { kind: 'drop_after' },
  ];
  if (target === 'chat') {
    const fault = random.pick<Fault>([
      ...common,
      { kind: 'malformed_output' },
      { kind: 'extra_key' },
      { kind: 'wrong_types' },
    ]);
    return {
      rule: { route: 'chat', model: random.pick(CHAT_MODELS), fault },
      simulator: 0,
    };
  }
  const fault = random.pick<Fault>([
    ...common,
    // A 2xx whose body breaks the contract: the charge may have happened.
    { kind: 'answer_with', merge: { status: 'pending' } },
    { kind: 'answer_with', merge: { amountCents: 'twelve' } },
    { kind: 'register_after_status_lookup' },
    // Files the charge under its own id: a 2xx, and "no record" under our key for ever. Three
    // times as likely as any other fault: the quirk behind a double charge this service once
    // had, and a campaign of a few hundred operations drew it only about twice.
    ...Array.from({ length: 3 }, (): Fault => ({
      kind: 'files_under_own_id',
      answer: random.pick(['pending', 'own_key'] as const),
    })),
  ]);
  return { rule: { route: 'charge', fault }, simulator: random.int(0, simulators - 1) };
}

/**
 * What an operator (or a provider's callback) would take as the truth about a charge attempt:
 * the provider's own record of its key, asked at the simulator that serves the provider.
 */
export async function chargeRecord(
  actors: Actors,
  provider: string,
  attemptId: string,
): Promise<{ state: 'charged'; output: Record<string, unknown> } | { state: 'none' | 'busy' }> {
  const url = `${simulatorOf(actors, provider)}/v1/charges/by-key/${encodeURIComponent(attemptId)}`;
  // The truth comes from the provider's ledger; the fault queue is for the service's calls.
  const entries = await ledgerOf(simulatorOf(actors, provider));
  const entry = entries.find((e) => e.route === 'charge' && e.idempotencyKey === attemptId);
  if (!entry || entry.executions === 0) return { state: 'none' };
  for (let tries = 0; tries < 5; tries++) {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch(
      () => undefined,
    );
    if (response?.status === 200) {
      return { state: 'charged', output: (await response.json()) as Record<string, unknown> };
    }
    await response?.body?.cancel();
    // Charged, yet no record under our key: the provider filed it under its own id. The
    // operator finds it in the provider's console, by the account.
    if (response?.status === 404) {
      const found = await fetch(
        `${simulatorOf(actors, provider)}/_simulator/console/charges/${encodeURIComponent(attemptId)}`,
      );
      if (found.status === 200)
        return { state: 'charged', output: (await found.json()) as Record<string, unknown> };
      await found.body?.cancel();
    }
  }
  return { state: 'busy' };
}

export interface LedgerEntryView {
  route: string;
  idempotencyKey: string;
  executions: number;
  requests: number;
}

export async function ledgerOf(simulatorUrl: string): Promise<LedgerEntryView[]> {
  const response = await fetch(`${simulatorUrl}/_simulator/ledger`);
  return ((await response.json()) as { entries: LedgerEntryView[] }).entries;
}

/** One request as a simulator logged it: the fields the campaign counts. */
export interface LoggedRequest {
  route: string;
  idempotencyKey: string;
  /** The fault it met, if any (its kind). */
  fault?: string;
  /** The status line the simulator answered it with; absent when it never answered. */
  answered?: number;
}

/** Every request a simulator received, in arrival order (`GET /_simulator/requests`). */
export async function requestsOf(simulatorUrl: string): Promise<LoggedRequest[]> {
  const response = await fetch(`${simulatorUrl}/_simulator/requests`);
  return ((await response.json()) as { requests: LoggedRequest[] }).requests;
}

/**
 * Settles an unknown attempt as an operator would, with the provider's ledger as the truth: the
 * status the resolve was answered with, or undefined when the operator could not act yet.
 */
export async function settleUnknown(
  actors: Actors,
  op: number,
  kind: string,
  attempt: { id: string; provider: string },
  random: Random,
  /** Whether the service had its chance to settle it itself (settle.ts); not during traffic. */
  serviceHadItsChance = false,
): Promise<number | undefined> {
  let body: Record<string, unknown>;
  if (actors.paymentProviders.includes(attempt.provider)) {
    const truth = await chargeRecord(actors, attempt.provider, attempt.id);
    if (truth.state === 'busy') return undefined;
    // No record yet proves nothing while the request may still land, or register when first
    // looked up: a careful operator says "failed" only once the service's own lookups had
    // their chance.
    if (truth.state === 'none' && !serviceHadItsChance) return undefined;
    body =
      truth.state === 'charged'
        ? {
            outcome: 'succeeded',
            reason: 'the provider ledger shows the charge',
            result: truth.output,
          }
        : { outcome: 'failed', reason: 'the provider ledger has no charge for this key' };
  } else {
    body = random.chance(0.5)
      ? { outcome: 'failed', reason: 'the chat answer never reached us' }
      : {
          outcome: 'succeeded',
          reason: 'summary written by hand',
          result: { summary: 'Settled by an operator from the provider console.' },
        };
  }
  const answer = await actors.client.send(
    op,
    kind,
    'POST',
    `/v1/operator/attempts/${encodeURIComponent(attempt.id)}/resolve`,
    {
      token: actors.operatorToken,
      via: 'lb',
      body,
    },
  );
  if (answer.status >= 200 && answer.status < 300)
    actors.world.operatorSettled.set(attempt.id, kind === 'settle' ? 'settle' : 'traffic');
  return answer.status;
}

/** Queues a fault at a simulator for the next call that matches it. */
async function queueFault(
  actors: Actors,
  op: number,
  simulator: number,
  rule: FaultRule,
): Promise<void> {
  actors.journal.providerFault(rule.fault.kind, { op, route: rule.route, simulator, rule });
  await postFault(actors, simulator, rule);
}

/** Lets every request held at a simulator's gate go on (`POST /_simulator/gates/<gate>`). */
async function openGate(actors: Actors, simulator: number, gate: string): Promise<void> {
  await fetch(`${actors.simulatorUrls[simulator]}/_simulator/gates/${encodeURIComponent(gate)}`, {
    method: 'POST',
  });
}

/** Hands a fault rule to a simulator (`POST /_simulator/faults`). */
async function postFault(actors: Actors, simulator: number, rule: FaultRule): Promise<void> {
  await fetch(`${actors.simulatorUrls[simulator]}/_simulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
}

/**
 * Starts a storm or an outage at a simulator. The journal keeps its window (which provider, from
 * when to when), so that a violation about a job it hit can show it.
 */
async function openFaultWindow(
  actors: Actors,
  op: number,
  kind: ProviderTroubleKind,
  trouble: ReturnType<typeof drawProviderTrouble>,
): Promise<void> {
  const { provider, simulator, rule } = trouble;
  const from = actors.journal.now();
  actors.journal.faultWindow(
    { id: `${kind}#${op}`, kind, provider, from, to: from + (rule.forMs ?? 0) },
    { op, route: rule.route, simulator, rule },
  );
  await postFault(actors, simulator, rule);
}

/** An operator cancels a job so that its key may be released and its intent run again. */
async function operatorCancel(
  actors: Actors,
  op: number,
  kind: OperationKind,
  jobId: string,
  via: Via,
): Promise<void> {
  await actors.client.send(op, kind, 'POST', `/v1/operator/jobs/${jobId}/cancel`, {
    token: actors.operatorToken,
    via,
    body: { reason: 'the customer wants it run again' },
  });
}

/** An operator releases a key's job; true if the service let it go. */
async function releaseKey(
  actors: Actors,
  op: number,
  kind: OperationKind,
  record: KeyRecord,
  jobId: string,
  via: Via,
): Promise<boolean> {
  record.releasesPending += 1;
  try {
    const answer = await actors.client.send(
      op,
      kind,
      'POST',
      `/v1/operator/jobs/${jobId}/release-key`,
      { token: actors.operatorToken, via, body: { reason: 'the customer wants it run again' } },
    );
    if (answer.status !== 200) return false;
    actors.world.released(record, jobId);
    return true;
  } finally {
    record.releasesPending -= 1;
  }
}

/**
 * The campaign's opening, the same in every run before the seeded lanes start: the provider
 * quirks behind the double charges this service once had, each aimed at a job of its own while
 * nothing else runs, so that whichever seed and machine, every campaign meets them at least
 * once (the seeded traffic draws each only a few times in a short run, and which job meets a
 * queued fault depends on timing). On each payment provider: a charge made and then answered
 * `502` (ambiguous, after the work), and a charge filed under the provider's own id (a 2xx, then
 * "no record" under our key for ever); each job has the other provider as its fallback. A charge
 * with one provider, refused once with `429`, whose retry there must be made. A charge held at
 * its provider while an operator cancels its job and asks to release its key. And a hedged
 * summary whose primary answers seconds late, so its answer loses a race. Returns the number of
 * operations it used.
 */
export async function runOpening(
  actors: Actors,
  waits: {
    /** Until the job's first provider call has left (its fault can meet no other call). */
    untilCalled: (jobId: string) => Promise<void>;
    /** Until the job has two attempts and every call it made has ended (the race is run). */
    untilRaced: (jobId: string) => Promise<void>;
    /** Until the job's row has ended. */
    untilEnded: (jobId: string) => Promise<void>;
    /** Breaks a link while `work` runs, then heals it (a partition, journaled as a fault). */
    partitioned: (link: string, fault: LinkFault, work: () => Promise<void>) => Promise<void>;
  } & CallTwiceWaits,
): Promise<number> {
  const { client, world, journal } = actors;
  const owner = Object.keys(actors.owners)[0]!;
  const token = actors.owners[owner]!;
  let op = 0;
  /** One job of operation `at`, its fault queued first; waits `until` it got that far. */
  const aimedAt = async (
    at: number,
    intent: Intent,
    simulator: number,
    rule: FaultRule,
    until = waits.untilCalled,
  ): Promise<{ record: KeyRecord; jobId: string | undefined }> => {
    const record = world.remember(owner, `chaos-opening-${at}-${rule.fault.kind}`, intent);
    journal.operation(at, 'create', { owner, key: record.key, intent, opening: true });
    // A charge's fault is aimed by its account: an earlier job's retry or fallback may still be
    // on its way to the same provider (a retry once took a hold meant for the next job).
    const { account } = intent.input;
    await queueFault(
      actors,
      at,
      simulator,
      intent.type === 'charge' && typeof account === 'string' ? { ...rule, account } : rule,
    );
    await client.create(at, 'create', record, { token, via: 'lb' });
    const [jobId] = record.jobIds;
    if (jobId) await until(jobId);
    return { record, jobId };
  };
  /** The next operation's job, alone. */
  const aimed = async (
    intent: Intent,
    simulator: number,
    rule: FaultRule,
    until = waits.untilCalled,
  ): Promise<{ record: KeyRecord; jobId: string | undefined }> => {
    const aimedJob = await aimedAt(op, intent, simulator, rule, until);
    op += 1;
    return aimedJob;
  };
  const quirks: Fault[] = [
    { kind: 'fail_after', status: 502 },
    { kind: 'files_under_own_id', answer: 'own_key' },
  ];
  for (const provider of LOOKUP_PAYMENT_PROVIDERS)
    for (const fault of quirks)
      await aimed(
        {
          type: 'charge',
          input: { amountCents: 1_000 + op, currency: 'EUR', account: `acct-opening-${op}` },
          providers: [provider, ...LOOKUP_PAYMENT_PROVIDERS.filter((other) => other !== provider)],
          mode: 'exclusive',
        },
        simulatorIndexOf(actors, provider),
        { route: 'charge', fault },
      );
  // A charge with one provider, refused once with 429 (before any work): a retry there is left,
  // so the job must be tried again on it; a build that gives up breaks invariant 9.
  await aimed(
    {
      type: 'charge',
      input: { amountCents: 1_000 + op, currency: 'EUR', account: `acct-opening-${op}` },
      providers: [LOOKUP_PAYMENT_PROVIDERS[0]],
      mode: 'exclusive',
    },
    0,
    { route: 'charge', fault: { kind: 'rate_limited', retryAfterSeconds: 1 } },
  );
  // A charge held at its one provider while an operator cancels its job and releases its key:
  // the call may still land, so the release must be refused (a build that lets it go breaks
  // invariant 4). The gate opens after, and the held charge is made and reconciled.
  const gate = `chaos-opening-release-${op}`;
  const held = await aimed(
    {
      type: 'charge',
      input: { amountCents: 1_000 + op, currency: 'EUR', account: `acct-opening-${op}` },
      providers: [LOOKUP_PAYMENT_PROVIDERS[0]],
      mode: 'exclusive',
    },
    0,
    { route: 'charge', fault: { kind: 'hold', gate } },
  );
  try {
    if (held.jobId) {
      const releaseOp = op;
      op += 1;
      journal.operation(releaseOp, 'release_key', {
        jobId: held.jobId,
        key: held.record.key,
        open: true,
        opening: true,
      });
      await operatorCancel(actors, releaseOp, 'release_key', held.jobId, 'lb');
      await waits.untilEnded(held.jobId);
      await releaseKey(actors, releaseOp, 'release_key', held.record, held.jobId, 'lb');
    }
  } finally {
    await openGate(actors, 0, gate);
  }
  // A read of a job while its replica's link to PostgreSQL is cut: the documented 503 with
  // Retry-After, never "no such job", which would make its owner start the work again.
  if (held.jobId) {
    const jobId = held.jobId;
    journal.operation(op, 'status', { jobId, opening: true });
    await waits.partitioned('api-0→postgres', { kind: 'cut' }, async () => {
      await client.send(op, 'status', 'GET', `/v1/jobs/${jobId}`, { token, owner, via: 'api0' });
    });
    op += 1;
  }
  // The four jobs that wait longest run side by side: each meets a fault aimed at its own model
  // or account, on a provider no other of them calls, and the next steps (which hold the next
  // begin, whichever job's) start only once all four are done. Their operations keep the numbers
  // they had one after another.
  const hedgeOp = op;
  const lostAnswerOp = op + 1;
  const windowOp = op + 3;
  const windowCloses = openingReplayWindowCloses(actors, waits, windowOp);
  await Promise.all([
    aimedAt(
      hedgeOp,
      {
        type: 'summarize',
        input: { text: 'The opening hedge: its primary answers after the hedge has won.' },
        providers: [HEDGED_PRIMARY.provider, 'simulator'],
        mode: 'hedged',
      },
      0,
      { route: 'chat', model: HEDGED_PRIMARY.model, fault: { kind: 'delay', ms: 8_000 } },
      // The lanes' storms would otherwise reach its hedge's call, and then nothing races.
      waits.untilRaced,
    ),
    // A lost answer on each provider that looks it up without a status lookup by key: on the
    // replay provider its work takes 5 s (its replays meet 409 meanwhile) and its answer is
    // dropped; on the lagging search, its answer is dropped after the work. Each must be settled
    // by the service, with one charge and no operator.
    ...(
      [
        [REPLAY_PROVIDER, { kind: 'delay', ms: 5_000, then: { kind: 'drop_after' } }],
        [SEARCH_PROVIDER, { kind: 'drop_after' }],
      ] as const
    ).map(([provider, fault], index) => {
      const at = lostAnswerOp + index;
      return aimedAt(
        at,
        {
          type: 'charge',
          input: { amountCents: 1_000 + at, currency: 'EUR', account: `acct-opening-${at}` },
          providers: [provider, LOOKUP_PAYMENT_PROVIDERS[0]],
          mode: 'exclusive',
        },
        simulatorIndexOf(actors, provider),
        { route: 'charge', fault },
        waits.untilEnded,
      );
    }),
    windowCloses,
  ]);
  op = await windowCloses;
  op = await openingCallsExecutedTwice(actors, waits, op);
  op = await openingMoney(actors, waits.untilEnded, op);
  op = await openingFallbackNeverSent(actors, waits, op);
  return openingPausedRun(actors, waits, op);
}

/**
 * Where the server pauses workflows: a charge held at its provider while an operator pauses its
 * run, cancels the job (a paused run takes no update: 409 `workflow-paused`, nothing done), lets
 * the held call answer, and unpauses. The run takes up the answer that came while it was
 * paused, and the job succeeds, charged once, whatever the traffic draws.
 *
 * Returns the next operation number.
 */
async function openingPausedRun(
  actors: Actors,
  waits: {
    untilCalled: (jobId: string) => Promise<void>;
    untilEnded: (jobId: string) => Promise<void>;
  },
  op: number,
): Promise<number> {
  if (!actors.pausesWorkflows) return op;
  const { client, world, journal } = actors;
  const owner = Object.keys(actors.owners)[0]!;
  const provider = LOOKUP_PAYMENT_PROVIDERS[0];
  const simulator = simulatorIndexOf(actors, provider);
  const intent: Intent = {
    type: 'charge',
    input: { amountCents: 1_000 + op, currency: 'EUR', account: `acct-opening-${op}-paused` },
    providers: [provider],
    mode: 'exclusive',
  };
  const record = world.remember(owner, `chaos-opening-${op}-paused-run`, intent);
  const gate = `chaos-opening-pause-${op}`;
  await queueFault(actors, op, simulator, {
    route: 'charge',
    account: String(intent.input.account),
    fault: { kind: 'hold', gate },
  });
  journal.operation(op, 'create', { owner, key: record.key, intent, opening: true });
  await client.create(op, 'create', record, { token: actors.owners[owner]!, via: 'lb' });
  const jobId = [...record.jobIds][0];
  const workflowId = [...record.workflowIds][0];
  try {
    if (jobId && workflowId) {
      await waits.untilCalled(jobId);
      world.nemesisStruck.add(jobId);
      journal.operation(op, 'operator_nemesis', { jobId, how: 'pause', opening: true });
      await pauseWhileActing(actors, op, 'operator_nemesis', { jobId, workflowId }, () =>
        openGate(actors, simulator, gate),
      );
    }
  } finally {
    await openGate(actors, simulator, gate);
  }
  if (jobId) await waits.untilEnded(jobId);
  return op + 1;
}

/** How long the opening's charge on the short-window replay provider is processed. */
const PROCESSED_PAST_THE_WINDOW_MS = 10_000;

/**
 * A charge on a replay provider whose key window closes while the charge is still being
 * processed: its call times out, its replays meet 409 until PostgreSQL refuses the next one (the
 * window less its margin is over), and the attempt waits for an operator. Nothing may be sent
 * under its key after that (invariant 4 counts each request against the replays recorded,
 * invariant 11 each replay's begin against its window): a build that re-sends the request
 * round the database's refusal sends one request too many, and, were the provider's window as
 * short, would charge again. When the charge is made, an operator finds it in the ledger and
 * settles the attempt.
 *
 * Returns the next operation number.
 */
async function openingReplayWindowCloses(
  actors: Actors,
  waits: CallTwiceWaits,
  op: number,
): Promise<number> {
  if (!waits.untilReplayWindowClosed) return op;
  const { client, world, journal } = actors;
  const owner = Object.keys(actors.owners)[0]!;
  const token = actors.owners[owner]!;
  const account = `acct-opening-${op}-window-closes`;
  const intent: Intent = {
    type: 'charge',
    input: { amountCents: 1_000 + op, currency: 'EUR', account },
    providers: [SHORT_WINDOW_REPLAY_PROVIDER],
    mode: 'exclusive',
  };
  const record = world.remember(owner, `chaos-opening-${op}-replay-window-closes`, intent);
  await queueFault(actors, op, simulatorIndexOf(actors, SHORT_WINDOW_REPLAY_PROVIDER), {
    route: 'charge',
    account,
    fault: { kind: 'delay', ms: PROCESSED_PAST_THE_WINDOW_MS, then: { kind: 'drop_after' } },
  });
  journal.operation(op, 'create', { owner, key: record.key, intent, opening: true });
  await client.create(op, 'create', record, { token, via: 'lb' });
  const jobId = [...record.jobIds][0];
  const attempt = { id: `${jobId}:1`, provider: SHORT_WINDOW_REPLAY_PROVIDER };
  if (jobId && (await waits.untilReplayWindowClosed(attempt.id))) {
    // The operator waits for the charge to be made (the provider's ledger), then settles it.
    const deadline = Date.now() + PROCESSED_PAST_THE_WINDOW_MS + 20_000;
    while (Date.now() < deadline) {
      if ((await chargeRecord(actors, attempt.provider, attempt.id)).state === 'charged') {
        journal.operation(op + 1, 'operator_resolve', { attemptId: attempt.id, opening: true });
        await settleUnknown(actors, op + 1, 'operator_resolve', attempt, new Random(op), true);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await waits.untilEnded(jobId);
  } else journal.write({ event: 'opening-note', op, note: 'no replay window was seen closing' });
  return op + 2;
}

/**
 * A race the campaign found in the service (fixed since, issue 54), aimed at by the opening: a run
 * terminated while its fallback's attempt is written (`starting`) and its begin waits, taken up
 * again by `startJob`. The new run's admission settles that attempt `never_sent`; the fallback
 * was never tried, so it must be tried again (a build that goes on after it fails the job with
 * its fallback never called: invariant 9).
 *
 * Returns the next operation number.
 */
async function openingFallbackNeverSent(
  actors: Actors,
  waits: CallTwiceWaits,
  op: number,
): Promise<number> {
  if (!waits.holdNextBegin) return op;
  const { client, world, journal } = actors;
  const owner = Object.keys(actors.owners)[0]!;
  const token = actors.owners[owner]!;
  const [primary, fallback] = LOOKUP_PAYMENT_PROVIDERS;
  const intent: Intent = {
    type: 'charge',
    input: { amountCents: 1_000 + op, currency: 'EUR', account: `acct-opening-${op}-adopted` },
    providers: [primary, fallback],
    mode: 'exclusive',
  };
  const record = world.remember(owner, `chaos-opening-${op}-adopt-starting-fallback`, intent);
  // The primary refuses before any work: the fallback's attempt is written next.
  await queueFault(actors, op, simulatorIndexOf(actors, primary), {
    route: 'charge',
    account: String(intent.input.account),
    fault: { kind: 'fail_before', status: 400 },
  });
  journal.operation(op, 'create', { owner, key: record.key, intent, opening: true });
  await client.create(op, 'create', record, { token, via: 'lb' });
  const jobId = [...record.jobIds][0];
  // Armed once the primary's call has left: the next begin is the fallback's.
  if (jobId && (await waits.untilRequested(`${jobId}:1`))) {
    const hold = await waits.holdNextBegin();
    try {
      if (await hold.reached(10_000)) {
        world.nemesisStruck.add(jobId);
        journal.operation(op, 'operator_nemesis', {
          jobId,
          attemptId: `${jobId}:2`,
          how: 'terminate_then_start',
          opening: true,
        });
        const workflowId = [...record.workflowIds][0]!;
        if (await terminateRun(actors, op, workflowId, 'an operator terminates the run mid-begin'))
          await startOnTemporal(actors, op, record);
        await waits.untilEnded(jobId);
      } else journal.write({ event: 'opening', op, what: 'no begin was held in 10 s', jobId });
    } finally {
      await hold.release();
    }
  }
  return op + 1;
}

/** A hold of the next provider call's begin, in the database (campaign.ts). */
export interface BeginHold {
  /** Whether a begin is held now, within `ms`. */
  reached(ms: number): Promise<boolean>;
  /** Lets it go on (and disarms the hold if no begin came). */
  release(): Promise<void>;
}

/** What the opening's twice-executed calls wait for (campaign.ts). */
export interface CallTwiceWaits {
  /** Until the job's row has ended. */
  untilEnded: (jobId: string) => Promise<void>;
  /**
   * Until a look found the attempt's key window over while it was still unknown (its kept
   * request dropped): no replay may be sent any more. False after 30 s.
   */
  untilReplayWindowClosed?: (attemptId: string) => Promise<boolean>;
  /**
   * Arms a hold of the next call's begin (`starting → running`): that statement waits in the
   * database until released, as a slow database would keep it. Undefined where the campaign
   * cannot install it.
   */
  holdNextBegin?: () => Promise<BeginHold>;
  /** Until the attempt's request has reached its provider (the simulator's log); false after 20 s. */
  untilRequested: (attemptId: string) => Promise<boolean>;
  /**
   * Until an execution of the attempt's call that did not begin it is done with it (the service
   * says so in its log, and whatever it writes is written); false after 20 s.
   */
  untilBeginLost: (attemptId: string) => Promise<boolean>;
}

/**
 * Issue 54's race, aimed, after the rest of the opening: one attempt's provider call executed
 * twice, the first execution still out, while the provider holds the charge (a gate) so that it
 * lands only after the second execution is done. Both charges have the other payment provider as
 * their fallback, so a build whose second execution writes `failed` over the live charge also
 * charges the fallback (the double charge the issue saw):
 *
 * - the charge's begin is held in the database, an operator terminates the run, and the owner's
 *   backend calls `startJob` again: the new run adopts attempt 1, still `starting`, and its call
 *   begins and is sent; then the held begin goes on and finds the attempt running;
 * - the primary refuses a charge before any work (`400`), the fallback's charge is held at its
 *   provider, and an operator resets the run to the workflow task that scheduled the fallback's
 *   call: the reset run calls for it again and finds it running.
 *
 * Returns the next operation number.
 */
async function openingCallsExecutedTwice(
  actors: Actors,
  waits: CallTwiceWaits,
  op: number,
): Promise<number> {
  const { client, world, journal } = actors;
  const owner = Object.keys(actors.owners)[0]!;
  const token = actors.owners[owner]!;
  const [primary, fallback] = LOOKUP_PAYMENT_PROVIDERS;
  const simulator = (provider: string) => simulatorIndexOf(actors, provider);
  const charge = (label: string): Intent => ({
    type: 'charge',
    input: { amountCents: 1_000 + op, currency: 'EUR', account: `acct-opening-${op}-${label}` },
    providers: [primary, fallback],
    mode: 'exclusive',
  });
  const create = async (record: KeyRecord): Promise<string | undefined> => {
    journal.operation(op, 'create', {
      owner,
      key: record.key,
      intent: record.intent,
      opening: true,
    });
    await client.create(op, 'create', record, { token, via: 'lb' });
    return [...record.jobIds][0];
  };
  const noted = (what: string, detail: Record<string, unknown>) =>
    journal.write({ event: 'opening', op, what, ...detail });

  // 1. Terminated mid-begin, taken up by startJob.
  if (waits.holdNextBegin) {
    const intent = charge('terminated');
    const account = String(intent.input.account);
    const record = world.remember(owner, `chaos-opening-${op}-terminate-mid-begin`, intent);
    const gate = `chaos-opening-terminate-${op}`;
    await queueFault(actors, op, simulator(primary), {
      route: 'charge',
      account,
      fault: { kind: 'hold', gate },
    });
    const hold = await waits.holdNextBegin();
    let jobId: string | undefined;
    try {
      jobId = await create(record);
      const attemptId = `${jobId}:1`;
      if (jobId && (await hold.reached(20_000))) {
        world.nemesisStruck.add(jobId);
        journal.operation(op, 'operator_nemesis', {
          jobId,
          attemptId,
          how: 'terminate_then_start',
          opening: true,
        });
        const workflowId = [...record.workflowIds][0]!;
        if (await terminateRun(actors, op, workflowId, 'an operator terminates the run mid-call'))
          await startOnTemporal(actors, op, record);
        // The new run's call began and was sent; the held begin has not gone on yet.
        if (!(await waits.untilRequested(attemptId)))
          noted('the new run sent no charge within 20 s', { jobId });
      } else noted('no begin was held within 20 s', { jobId });
    } finally {
      await hold.release();
    }
    if (jobId) {
      if (!(await waits.untilBeginLost(`${jobId}:1`)))
        noted('no second execution said it lost the begin', { jobId });
      await openGate(actors, simulator(primary), gate);
      await waits.untilEnded(jobId);
    } else await openGate(actors, simulator(primary), gate);
    op += 1;
  }

  // 2. Reset to just before the fallback's call.
  {
    const intent = charge('reset');
    const account = String(intent.input.account);
    const record = world.remember(owner, `chaos-opening-${op}-reset-mid-call`, intent);
    const gate = `chaos-opening-reset-${op}`;
    await queueFault(actors, op, simulator(primary), {
      route: 'charge',
      account,
      fault: { kind: 'fail_before', status: 400 },
    });
    await queueFault(actors, op, simulator(fallback), {
      route: 'charge',
      account,
      fault: { kind: 'hold', gate },
    });
    const jobId = await create(record);
    try {
      const second = `${jobId}:2`;
      if (jobId && (await waits.untilRequested(second))) {
        world.nemesisStruck.add(jobId);
        journal.operation(op, 'operator_nemesis', {
          jobId,
          attemptId: second,
          how: 'reset',
          opening: true,
        });
        const workflowId = [...record.workflowIds][0]!;
        if (await resetToLatestCall(actors, op, workflowId, second)) {
          if (!(await waits.untilBeginLost(second)))
            noted('no second execution said it lost the begin', { jobId });
        } else noted('the reset found no call to go back to', { jobId });
      } else noted('the fallback received no charge within 20 s', { jobId });
    } finally {
      await openGate(actors, simulator(fallback), gate);
    }
    if (jobId) await waits.untilEnded(jobId);
    op += 1;
  }
  return op;
}

/** Runs one operation of the given kind; what it saw goes into the journal and the world. */
export async function runOperation(
  actors: Actors,
  op: number,
  kind: OperationKind,
  random: Random,
): Promise<void> {
  const { client, world, journal } = actors;
  // The broke owner is the opening's alone: in traffic its every job would fail the same way.
  const owners = Object.keys(actors.owners).filter((name) => name !== BROKE_OWNER);
  const owner = random.pick(owners);
  const token = actors.owners[owner]!;

  switch (kind) {
    case 'create': {
      const record = world.remember(owner, freshKey(random, 'new'), newIntent(random));
      journal.operation(op, kind, { owner, key: record.key, intent: record.intent });
      // Mostly a slow primary for a hedged job: well past its attempt timeout, so the hedge runs
      // and wins even on a busy machine (where each workflow step takes a second or more), and
      // the primary's answer comes back late (within its late-result window, see stack.ts) to
      // lose the compare-and-swap. The delay may reach another job's call: fine too.
      if (record.intent.mode === 'hedged' && random.chance(0.8))
        await queueFault(actors, op, 0, {
          route: 'chat',
          model: HEDGED_PRIMARY.model,
          fault: { kind: 'delay', ms: random.int(6_000, 11_000) },
        });
      const lost = drawLookupFault(random, record.intent);
      if (lost)
        await queueFault(actors, op, simulatorIndexOf(actors, record.intent.providers[0]!), lost);
      await client.create(op, kind, record, { token, via: anyVia(random) });
      return;
    }
    case 'duplicates': {
      const record = world.remember(owner, freshKey(random, 'dup'), newIntent(random));
      const count = random.chance(0.2) ? random.int(9, 64) : random.int(2, 8);
      journal.operation(op, kind, { owner, key: record.key, count, intent: record.intent });
      const vias: Via[] = ['lb', 'api0', 'api1'];
      await Promise.all(
        Array.from({ length: count }, (_, i) =>
          client.create(op, kind, record, { token, via: vias[i % vias.length]! }),
        ),
      );
      return;
    }
    case 'replay':
    case 'reordered_replay': {
      const record = createdRecord(actors, random);
      if (!record) return;
      journal.operation(op, kind, { owner: record.owner, key: record.key });
      await client.create(op, kind, record, {
        token: actors.owners[record.owner]!,
        via: anyVia(random),
        ...(kind === 'reordered_replay' ? { body: reorderedJson(record.intent) } : {}),
      });
      return;
    }
    case 'mismatch': {
      const record = createdRecord(actors, random);
      // A released key takes another intent as its next job: no longer a reuse to refuse.
      if (
        !record ||
        record.releases.length > 0 ||
        record.releasesPending > 0 ||
        record.releaseOpsInFlight > 0
      )
        return;
      const other: Intent =
        record.intent.type === 'charge'
          ? {
              ...record.intent,
              input: {
                ...record.intent.input,
                amountCents: Number(record.intent.input.amountCents) + 1,
              },
            }
          : { ...record.intent, input: { text: `${String(record.intent.input.text)} (edited)` } };
      journal.operation(op, kind, { owner: record.owner, key: record.key });
      record.mismatchesInFlight += 1;
      let answer: Awaited<ReturnType<ChaosClient['create']>>;
      try {
        answer = await client.create(op, kind, record, {
          token: actors.owners[record.owner]!,
          via: anyVia(random),
          body: JSON.stringify(other),
        });
      } finally {
        record.mismatchesInFlight -= 1;
      }
      if (answer.status === 409)
        world.mismatches.push({ owner: record.owner, key: record.key, at: journal.now() });
      else
        world.sight(
          7,
          `key ${record.key} reused with another intent was answered ${answer.status}, not 409`,
          [record.key],
        );
      return;
    }
    case 'temporal_race': {
      const record = world.remember(owner, freshKey(random, 'race'), newIntent(random));
      journal.operation(op, kind, { owner, key: record.key, intent: record.intent });
      const native = startOnTemporal(actors, op, record, kind);
      await Promise.all([native, client.create(op, kind, record, { token, via: anyVia(random) })]);
      return;
    }
    case 'child': {
      if (!actors.startChildJob) return;
      const record = world.remember(owner, freshKey(random, 'child'), newIntent(random));
      journal.operation(op, kind, { owner, key: record.key, intent: record.intent });
      try {
        const parent = await actors.startChildJob(record);
        journal.write({ event: 'parent-started', op, workflowId: parent.workflowId });
      } catch (error) {
        journal.write({ event: 'parent-failed', op, error: (error as Error).message });
      }
      // The HTTP side of the same key, racing the child.
      await client.create(op, kind, record, { token, via: anyVia(random) });
      return;
    }
    case 'try_again': {
      const jobId = someJobId(actors, random);
      if (!jobId) return;
      const record = world.jobs.get(jobId)!;
      journal.operation(op, kind, { jobId });
      await client.send(op, kind, 'POST', `/v1/jobs/${jobId}/attempts`, {
        token: actors.owners[record.owner]!,
        via: anyVia(random),
        owner: record.owner,
        body: random.chance(0.3) ? { provider: random.pick(record.intent.providers) } : {},
      });
      return;
    }
    case 'operator_resolve': {
      const unknown = [...world.seenUnknown];
      if (unknown.length === 0) return;
      const attemptId = random.pick(unknown);
      const jobId = attemptId.split(':')[0]!;
      const record = world.jobs.get(jobId);
      if (!record) return;
      const answer = await client.send(op, kind, 'GET', `/v1/jobs/${jobId}`, {
        token: actors.owners[record.owner]!,
        owner: record.owner,
      });
      const attempt = asJob(answer.body)?.attempts.find((a) => a.id === attemptId);
      if (attempt?.state !== 'unknown') return;
      journal.operation(op, kind, { attemptId });
      await settleUnknown(actors, op, kind, attempt, random);
      return;
    }
    case 'operator_cancel': {
      const jobId = someJobId(actors, random);
      if (!jobId) return;
      journal.operation(op, kind, { jobId });
      await client.send(op, kind, 'POST', `/v1/operator/jobs/${jobId}/cancel`, {
        token: actors.operatorToken,
        via: anyVia(random),
        body: { reason: 'the customer withdrew the order' },
      });
      return;
    }
    case 'release_key': {
      // An operator frees a key so that its intent runs again: half the time a charge with an
      // attempt open, cancelled first (and tried while that attempt may still take effect),
      // then the client sends the intent again, which makes the key's next job.
      const target = await keyToRelease(actors, op, kind, random);
      if (!target) return;
      const { record, jobId } = target;
      if (record.mismatchesInFlight > 0 || record.releasesPending > 0) return;
      journal.operation(op, kind, { jobId, key: record.key, open: target.open });
      // Held from here: a mismatch sent while the cancel below runs could land after the release.
      record.releaseOpsInFlight += 1;
      try {
        // A job with an attempt open is cancelled first, as an operator would before a release.
        const cancelVia = target.open || random.chance(0.6) ? anyVia(random) : undefined;
        if (cancelVia) await operatorCancel(actors, op, kind, jobId, cancelVia);
        const released = await releaseKey(actors, op, kind, record, jobId, anyVia(random));
        if (released && random.chance(0.8))
          await client.create(op, kind, record, {
            token: actors.owners[record.owner]!,
            via: anyVia(random),
          });
      } finally {
        record.releaseOpsInFlight -= 1;
      }
      return;
    }
    case 'temporal_cancel': {
      const record = createdRecord(actors, random);
      const workflowId = record && [...record.workflowIds][0];
      if (!workflowId) return;
      journal.operation(op, kind, { workflowId });
      try {
        await actors.temporal.workflow.getHandle(workflowId).cancel();
        journal.write({ event: 'temporal-cancel', op, workflowId, ok: true });
      } catch (error) {
        journal.write({
          event: 'temporal-cancel',
          op,
          workflowId,
          error: (error as Error).message,
        });
      }
      return;
    }
    case 'callback': {
      const { charges } = world;
      if (charges.length === 0) return;
      const record = random.pick(charges);
      const jobId = [...record.jobIds][0]!;
      const view = asJob(
        (
          await client.send(op, kind, 'GET', `/v1/jobs/${jobId}`, {
            token: actors.owners[record.owner]!,
            owner: record.owner,
          })
        ).body,
      );
      const attempt = view && view.attempts.length > 0 ? random.pick(view.attempts) : undefined;
      if (!attempt) return;
      const truth = await chargeRecord(actors, attempt.provider, attempt.id);
      const secret = actors.callbackSecrets[attempt.provider];
      if (truth.state !== 'charged' || !secret) return;
      journal.operation(op, kind, { attemptId: attempt.id });
      const raw = JSON.stringify({
        attemptId: attempt.id,
        status: 'succeeded',
        output: truth.output,
      });
      const signature = signCallback(secret, raw);
      const deliveries = random.chance(0.3) ? 2 : 1;
      for (let i = 0; i < deliveries; i++) {
        await client.send(op, kind, 'POST', `/v1/callbacks/${attempt.provider}`, {
          token: 'none',
          via: anyVia(random),
          body: raw,
          headers: { [SIGNATURE_HEADER]: signature },
        });
      }
      return;
    }
    case 'status': {
      const jobId = someJobId(actors, random);
      if (!jobId) return;
      const record = world.jobs.get(jobId)!;
      journal.operation(op, kind, { jobId });
      await client.send(
        op,
        kind,
        'GET',
        `/v1/jobs/${jobId}${random.chance(0.3) ? '?wait=2' : ''}`,
        {
          token: actors.owners[record.owner]!,
          owner: record.owner,
          via: anyVia(random),
        },
      );
      return;
    }
    case 'list': {
      journal.operation(op, kind, { owner });
      const answer = await client.send(op, kind, 'GET', '/v1/jobs?limit=50', { token, owner });
      const jobs = (answer.body as { jobs?: Array<{ id: string }> } | null)?.jobs ?? [];
      for (const job of jobs) {
        const known = world.jobs.get(job.id);
        if (known && known.owner !== owner)
          world.sight(1, `owner ${owner}'s list showed job ${job.id} of ${known.owner}`, [job.id]);
      }
      return;
    }
    case 'provider_fault': {
      // Not at the replay and search providers' simulator: there, faults are aimed by account.
      const { rule, simulator } = drawProviderFault(
        random,
        1 + Math.max(...LOOKUP_PAYMENT_PROVIDERS.map((name) => simulatorIndexOf(actors, name))),
      );
      await queueFault(actors, op, simulator, rule);
      return;
    }
    case 'rate_limit_storm':
    case 'provider_outage': {
      const trouble = drawProviderTrouble(random, kind, actors.paymentSimulators);
      await openFaultWindow(actors, op, kind, trouble);
      return;
    }
    case 'operator_nemesis': {
      // An operator strikes a run while one of its calls is out: terminates it (and the owner's
      // backend starts the job again, or the sweeper takes it up), or resets it to the workflow
      // task that scheduled that call. Each job at most once; only a key's latest job, with no
      // release of its key under way (a start then would make the key's next job).
      const calls = (await actors.callsInFlight?.()) ?? [];
      const open = calls.filter((call) => {
        const record = world.jobs.get(call.jobId);
        return (
          record !== undefined &&
          !world.nemesisStruck.has(call.jobId) &&
          World.latestJob(record) === call.jobId &&
          record.releasesPending === 0 &&
          record.releaseOpsInFlight === 0
        );
      });
      if (open.length === 0) return;
      const call = random.pick(open);
      const record = world.jobs.get(call.jobId)!;
      // A pause only where the server has it: the dev server's campaign draws as it always did.
      const strikes = { terminate_then_start: 2, terminate_for_sweeper: 1, reset: 2 };
      const how: keyof typeof strikes | 'pause' = actors.pausesWorkflows
        ? random.weighted({ ...strikes, pause: 2 })
        : random.weighted(strikes);
      world.nemesisStruck.add(call.jobId);
      journal.operation(op, kind, { jobId: call.jobId, attemptId: call.attemptId, how });
      if (how === 'pause') return await pauseWhileActing(actors, op, kind, call);
      if (how === 'reset' && (await resetToLatestCall(actors, op, call.workflowId))) return;
      // A reset with no call to go back to in this run (it took the attempt over from a closed
      // one) becomes a terminate.
      const terminated = await terminateRun(
        actors,
        op,
        call.workflowId,
        `an operator terminates the run while ${call.attemptId} is out`,
      );
      if (terminated && how !== 'terminate_for_sweeper') await startOnTemporal(actors, op, record);
      return;
    }
  }
}
