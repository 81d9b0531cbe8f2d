import type { Logger } from '../logger';
import type { Pool, PoolClient } from './pool';

/** The channel migration 0007 notifies, with the job id, when a job row becomes terminal. */
export const JOB_ENDED_CHANNEL = 'onejob_job_ended';

/** How long to wait before listening again after the connection was lost. */
const RELISTEN_DELAY_MS = 1_000;

/** One job's ending, as a waiter sees it: `sleep` returns early once the job has ended. */
export interface JobEndingWatch {
  /** Sleeps `ms`, or less: until the job ends (or ended since the last sleep) or `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  stop(): void;
}

/**
 * Tells `?wait=` requests the moment their job ends, from one connection of the pool that
 * listens on JOB_ENDED_CHANNEL. It only wakes waiters early: they still read the row, so a
 * notification can never change an answer. Endings announced while that connection is down are
 * not heard, so every waiter is woken when it is lost (they poll at their old pace while
 * `listening` is false) and again once it listens anew (a second later), to look at the rows.
 */
export class JobEndings {
  private readonly waiters = new Map<string, Set<() => void>>();
  private client: PoolClient | undefined;
  private closed = false;
  private relisten: NodeJS.Timeout | undefined;
  /** Connections already given up (lost, or closed by us). */
  private readonly done = new WeakSet<PoolClient>();
  /** Said once per outage, not at every retry. */
  private reportedDown = false;

  private constructor(
    private readonly pool: Pool,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
  ) {}

  static async listen(pool: Pool, logger: Pick<Logger, 'warn' | 'info'>): Promise<JobEndings> {
    const endings = new JobEndings(pool, logger);
    await endings.connect();
    return endings;
  }

  get listening(): boolean {
    return this.client !== undefined;
  }

  watch(jobId: string): JobEndingWatch {
    let ended = false;
    let wake: (() => void) | undefined;
    const onEnded = (): void => {
      ended = true;
      wake?.();
    };
    let set = this.waiters.get(jobId);
    if (!set) this.waiters.set(jobId, (set = new Set()));
    set.add(onEnded);
    return {
      sleep: (ms, signal) =>
        new Promise<void>((resolve) => {
          // Consumed once: a second sleep after it waits again (the row said otherwise).
          if (ended || signal?.aborted) {
            ended = false;
            resolve();
            return;
          }
          const done = (): void => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            wake = undefined;
            ended = false;
            resolve();
          };
          const timer = setTimeout(done, ms);
          wake = done;
          signal?.addEventListener('abort', done);
        }),
      stop: () => {
        set.delete(onEnded);
        if (set.size === 0 && this.waiters.get(jobId) === set) this.waiters.delete(jobId);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.relisten);
    const client = this.client;
    this.client = undefined;
    if (client && !this.done.has(client)) {
      this.done.add(client);
      client.release(true);
    }
  }

  private async connect(): Promise<void> {
    let client: PoolClient | undefined;
    try {
      client = await this.pool.connect();
      client.on('notification', (message) => {
        if (message.channel !== JOB_ENDED_CHANNEL || !message.payload) return;
        for (const onEnded of this.waiters.get(message.payload) ?? []) onEnded();
      });
      client.on('error', (error) => this.lost(client!, error));
      client.on('end', () => this.lost(client!, new Error('the connection ended')));
      await client.query(`LISTEN ${JOB_ENDED_CHANNEL}`);
      if (this.closed) {
        this.done.add(client);
        client.release(true);
        return;
      }
      this.client = client;
      this.wakeEveryone();
      if (this.reportedDown) this.logger.info('listening for job endings again');
      this.reportedDown = false;
    } catch (error) {
      if (client) this.lost(client, error as Error);
      else this.retryLater(error as Error);
    }
  }

  /** Each waiter looks at its row again: something may have ended unheard. */
  private wakeEveryone(): void {
    for (const set of this.waiters.values()) for (const onEnded of set) onEnded();
  }

  private lost(client: PoolClient, error: Error): void {
    // 'error' and 'end' both come for one loss: it is handled once.
    if (this.done.has(client)) return;
    this.done.add(client);
    client.removeAllListeners('notification');
    // Never back into the pool: it is a listening session, and its connection is broken.
    client.release(error);
    if (this.client !== undefined && this.client !== client) return;
    this.client = undefined;
    this.wakeEveryone();
    this.retryLater(error);
  }

  private retryLater(error: Error): void {
    if (this.closed || this.relisten) return;
    if (!this.reportedDown)
      this.logger.warn(
        { err: error.message },
        'not listening for job endings; waits poll until it listens again',
      );
    this.reportedDown = true;
    this.relisten = setTimeout(() => {
      this.relisten = undefined;
      void this.connect();
    }, RELISTEN_DELAY_MS);
    this.relisten.unref();
  }
}
