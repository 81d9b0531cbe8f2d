import { canonicalJson } from '../../src/domain/canonicalJson';
import type { Journal } from './journal';

/** A job as the API shows it: the fields the campaign reads. */
export interface JobView {
  id: string;
  status: string;
  workflowId: string;
  result: unknown;
  completedBy: string | null;
  /** Present on reads; a create's answer leaves them out (then empty here). */
  attempts: Array<{ id: string; seq: number; state: string; provider: string }>;
}

export interface Intent {
  type: 'summarize' | 'charge';
  input: Record<string, unknown>;
  providers: string[];
  mode?: 'exclusive' | 'hedged';
}

/** One (owner, key) the campaign used, and every job id any answer named for it. */
export interface KeyRecord {
  owner: string;
  key: string;
  intent: Intent;
  /** Job ids named by 2xx answers and Temporal-native starts for this key. */
  jobIds: Set<string>;
  workflowIds: Set<string>;
  /** The job id of the first 201, when one came. */
  createdAs?: string;
  /** Requests a client sent more than once (retries with the same key). */
  retried: boolean;
  /** Jobs of this key an operator released, in order: each lets the key name one job more. */
  releases: Array<{ jobId: string; at: number }>;
  /** Releases sent and not yet answered: a job they allow may be named before their answer. */
  releasesPending: number;
  /**
   * release_key operations under way (from their check to their end, the cancel before the
   * release included): a mismatch is not sent meanwhile, or it could land just after the release
   * and rightly make the key's next job.
   */
  releaseOpsInFlight: number;
  /** Creates with another intent still in flight (a release waits for them: see mismatch). */
  mismatchesInFlight: number;
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** A job's outcome when the campaign first saw it terminal: it must never change. */
export interface Snapshot {
  jobId: string;
  status: string;
  result: string;
  completedBy: string | null;
  at: number;
}

/** A contradiction the campaign saw while running (checked again, in full, at the end). */
export interface Sighting {
  invariant: number;
  message: string;
  needles: string[];
}

/**
 * What the campaign knows as it runs: the keys it used with the intent behind each, the jobs the
 * answers named, the first terminal outcome of every job (a recorded result must never change),
 * and the attempts it ever saw `unknown`.
 */
export class World {
  readonly keys = new Map<string, KeyRecord>();
  /** Keys an answer has named a job for, in order: what later operations pick from. */
  readonly created: KeyRecord[] = [];
  readonly charges: KeyRecord[] = [];
  readonly jobList: string[] = [];
  readonly jobs = new Map<string, KeyRecord>();
  readonly snapshots = new Map<string, Snapshot>();
  readonly seenUnknown = new Set<string>();
  readonly sightings: Sighting[] = [];
  /** 409 answers to a reused key with another intent, and the job that key belongs to. */
  readonly mismatches: Array<{ owner: string; key: string; at: number }> = [];
  /**
   * Jobs the operator nemesis struck (terminated or reset a run of): each at most once, as a
   * job whose workflow keeps closing is, after a few sweeper restarts, left for an operator.
   */
  readonly nemesisStruck = new Set<string>();
  /**
   * What the nemesis's pauses did: runs paused and unpaused again, operator cancels sent while
   * paused, and those answered 409 `workflow-paused` (the rest found the job ended first).
   */
  readonly pauses = { cycles: 0, cancelsWhilePaused: 0, refusedAsPaused: 0 };
  /**
   * Attempts the campaign's operators settled (a resolve answered 2xx): during traffic, racing
   * the service as a real operator may, or in the settle step, after the service had its time.
   */
  readonly operatorSettled = new Map<string, 'traffic' | 'settle'>();

  constructor(private readonly journal: Journal) {}

  static id(owner: string, key: string): string {
    return `${owner}\u0000${key}`;
  }

  remember(owner: string, key: string, intent: Intent): KeyRecord {
    const id = World.id(owner, key);
    let record = this.keys.get(id);
    if (!record) {
      record = {
        owner,
        key,
        intent,
        jobIds: new Set(),
        workflowIds: new Set(),
        retried: false,
        releases: [],
        releasesPending: 0,
        releaseOpsInFlight: 0,
        mismatchesInFlight: 0,
      };
      this.keys.set(id, record);
    }
    return record;
  }

  /** A job id an answer named for a key. */
  named(record: KeyRecord, jobId: string, workflowId: string | undefined, created: boolean): void {
    if (record.jobIds.size === 0) {
      this.created.push(record);
      if (record.intent.type === 'charge') this.charges.push(record);
    }
    if (!this.jobs.has(jobId)) this.jobList.push(jobId);
    record.jobIds.add(jobId);
    if (workflowId) record.workflowIds.add(workflowId);
    if (created && !record.createdAs) record.createdAs = jobId;
    this.jobs.set(jobId, record);
    // Each release lets the key make one job more (the next create after it, its next generation).
    if (record.jobIds.size > 1 + record.releases.length + record.releasesPending)
      this.sight(
        1,
        `key ${record.key} of ${record.owner} was answered with ${record.jobIds.size} jobs after ${record.releases.length} releases`,
        [record.key, ...record.jobIds],
      );
  }

  /** An operator released the key of `jobId`: the key's next create makes a new job. */
  released(record: KeyRecord, jobId: string): void {
    record.releases.push({ jobId, at: this.journal.now() });
    this.journal.write({ event: 'key-released', owner: record.owner, key: record.key, jobId });
  }

  /** The job a key names now: the one named last (a later generation is named after its release). */
  static latestJob(record: KeyRecord): string | undefined {
    return [...record.jobIds].pop();
  }

  /**
   * Every job representation an answer carried goes through here, with when its request was
   * sent: an answer to a request sent before the job was seen ended may show it earlier (it was
   * read then), one sent after may not.
   */
  observe(job: JobView, requestSentAt: number): void {
    for (const attempt of job.attempts ?? []) {
      if (attempt.state === 'unknown') this.seenUnknown.add(attempt.id);
    }
    const earlier = this.snapshots.get(job.id);
    if (earlier && requestSentAt <= earlier.at) return;
    if (!TERMINAL.has(job.status)) {
      if (earlier)
        this.sight(2, `job ${job.id} was ${earlier.status} and is now ${job.status}`, [job.id]);
      return;
    }
    const result = canonicalJson(job.result ?? null);
    if (!earlier) {
      this.snapshots.set(job.id, {
        jobId: job.id,
        status: job.status,
        result,
        completedBy: job.completedBy,
        at: this.journal.now(),
      });
      return;
    }
    if (
      earlier.status !== job.status ||
      earlier.result !== result ||
      earlier.completedBy !== job.completedBy
    )
      this.sight(
        2,
        `job ${job.id}'s recorded outcome changed: ${earlier.status} by ${earlier.completedBy}, now ${job.status} by ${job.completedBy}`,
        [job.id],
      );
  }

  sight(invariant: number, message: string, needles: string[]): void {
    if (this.sightings.some((s) => s.message === message)) return;
    this.sightings.push({ invariant, message, needles });
    this.journal.write({ event: 'sighting', invariant, message });
  }

  /** Every key the campaign used. */
  records(): KeyRecord[] {
    return [...this.keys.values()];
  }
}
