import pg from 'pg';
import { lockWaiters } from './lockWaits';
import { eventually } from './polling';
import type { TestStack } from './stack';

/**
 * A barrier in PostgreSQL: a transaction the test holds open. Whatever it locks (with `lock`,
 * or by writing through `client`) stops the system's conflicting statements until `release()`
 * commits; the test sees the blocked statement in pg_stat_activity, acts, then lets it go on.
 */
export async function holdTransaction(stack: Pick<TestStack, 'pool'>, lock?: string) {
  const client = await stack.pool.connect();
  await client.query('BEGIN');
  if (lock) await client.query(lock);
  return {
    /** Runs in the barrier's own transaction (its writes are not blocked). */
    client,
    /**
     * Waits until `count` statements that start with `prefix` wait for a lock (the barrier's).
     * Name the statement you wait for: another one waiting (a reconciler's, a call's end) must not
     * stand in for it.
     */
    async blocked(prefix: string, count = 1): Promise<void> {
      await eventually(
        () => lockWaiters(stack.pool, prefix),
        (n) => n >= count,
      );
    },
    async release(): Promise<void> {
      await client.query('COMMIT');
      client.release();
    },
  };
}

/** A barrier that lets every read through but stops every write to `attempts`. */
export function holdAttemptWrites(stack: TestStack) {
  return holdTransaction(stack, 'LOCK TABLE attempts IN SHARE ROW EXCLUSIVE MODE');
}

/**
 * A barrier in this process's database driver: the first prepared statement named `name` whose
 * values satisfy `when` is held before it is sent, until `release()`. The statement then runs on
 * the real database as it would have; only its moment is chosen. For the in-process worker,
 * whose pool is the test's.
 */
export function holdStatement(name: string, when: (values: readonly unknown[]) => boolean) {
  const prototype = pg.Client.prototype as unknown as {
    query: (this: pg.Client, ...args: unknown[]) => unknown;
  };
  const send = prototype.query;
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  let armed = true;
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as { name?: string; values?: unknown[] } | undefined;
    if (!armed || typeof config !== 'object' || config?.name !== name || !when(config.values ?? []))
      return send.apply(this, args);
    armed = false;
    reach();
    // pg's pool passes a callback (the answer goes there); a direct caller awaits the promise.
    const last = args[args.length - 1];
    if (typeof last === 'function') {
      const callback = last as (...results: unknown[]) => void;
      void released.then(() =>
        send.apply(this, [
          ...args.slice(0, -1),
          (...results: unknown[]) => {
            callback(...results);
            answer();
          },
        ]),
      );
      return undefined;
    }
    const later = released.then(() => send.apply(this, args) as Promise<unknown>);
    void later.finally(answer).catch(() => undefined);
    return later;
  };
  return {
    /** Resolves once the statement has been caught. */
    reached,
    release,
    /** Resolves once the statement, let go, has been answered (and its caller told). */
    answered,
    /** Puts the driver back as it was (call it whatever happened). */
    restore(): void {
      prototype.query = send;
      release();
    },
  };
}

/**
 * A barrier inside one of the system's statements: a row trigger, `BEFORE <event>` (`INSERT ON
 * jobs`, say) and only where `when` holds, waits for an advisory lock the test holds. The
 * statement has started and written nothing when it stops there; it goes on once `letGo()`
 * frees the lock. Only the calling test's database gets the trigger, until `remove()`.
 * `at: 'commit'` makes it a deferred constraint trigger instead: the transaction that wrote the
 * row stops in its COMMIT, after its client sent it, and commits once the lock is freed, even if
 * that client is gone by then (PostgreSQL notices a lost client only when it answers).
 */
export async function holdRowsInTrigger(
  stack: TestStack,
  name: string,
  event: `${'INSERT' | 'UPDATE'} ON ${string}`,
  when = 'true',
  at: 'statement' | 'commit' = 'statement',
) {
  const key = `hashtext('${name}')`;
  const trigger =
    at === 'commit'
      ? `CREATE CONSTRAINT TRIGGER ${name} AFTER ${event} DEFERRABLE INITIALLY DEFERRED`
      : `CREATE TRIGGER ${name} BEFORE ${event}`;
  await stack.pool.query(`
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_advisory_xact_lock_shared(${key}); RETURN NEW; END $$;
    ${trigger} FOR EACH ROW WHEN (${when})
      EXECUTE FUNCTION ${name}();`);
  const holder = await stack.pool.connect();
  await holder.query(`SELECT pg_advisory_lock(${key})`);
  const waiting = `SELECT pid FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`;
  let held = true;
  const letGo = async (): Promise<void> => {
    if (!held) return;
    held = false;
    await holder.query(`SELECT pg_advisory_unlock(${key})`);
    holder.release();
  };
  return {
    /** Waits until a statement is stopped at the barrier. */
    blocked: (timeoutMs = 20_000) =>
      eventually(
        async () => (await stack.pool.query(waiting)).rowCount ?? 0,
        (n) => n > 0,
        timeoutMs,
      ),
    letGo,
    /** Ends the statements stopped at the barrier (a killed process's, whose client is gone). */
    async terminateWaiters(): Promise<void> {
      await stack.pool.query(`SELECT pg_terminate_backend(pid) FROM (${waiting}) stranded`);
    },
    /** Lets go (if not yet) and takes the trigger away. */
    async remove(): Promise<void> {
      await letGo();
      await stack.pool.query(`DROP TRIGGER ${name} ON ${event.replace(/^\w+ ON /, '')};
        DROP FUNCTION ${name}();`);
    },
  };
}
