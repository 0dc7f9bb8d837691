import type { Db } from '../../db/client';
import type { Store } from '../../db/store';
import { gatedRead, type AgentRowReads, type AgentRowStatements } from './agent-rows';

export interface AgentChangeCursor {
  /** max(agents.change_seq), -1 for none: moves on every agent write, by any process. */
  latest(): number;
}

/**
 * Tells readers when the directory changed, by reading max(change_seq).
 *
 * That read is an index lookup, but also a SQLite read transaction: about
 * 2 µs, a tenth of what a whole GET /agents/{id} costs when its profile is
 * cached. So the value is kept for the rest of the event-loop turn and shared
 * by every request handled in it:
 * - a write by this process (any table) moves SQLite's total_changes(), a
 *   counter of this connection that costs no transaction, and the next read
 *   takes max(change_seq) again: the very next request sees it;
 * - a write by another process (a `cli import` beside the server) is seen
 *   from the next turn on, i.e. within microseconds under load, and by any
 *   request that arrives after the turn in which it committed.
 */
export function createAgentChangeCursor(db: Db, rows: Pick<AgentRowStatements, 'latestChangeSeq'>): AgentChangeCursor {
  const localWrites = db.$client.prepare('SELECT total_changes()').pluck();
  let seq: number | undefined;
  let seqAtLocalWrites = -1;
  let forgetScheduled = false;
  const forget = () => {
    seq = undefined;
    forgetScheduled = false;
  };
  return {
    latest(): number {
      const writes = localWrites.get() as number;
      if (seq !== undefined && writes === seqAtLocalWrites) return seq;
      seq = rows.latestChangeSeq();
      seqAtLocalWrites = writes;
      if (!forgetScheduled) {
        forgetScheduled = true;
        setImmediate(forget);
      }
      return seq;
    },
  };
}

/** The cursor for the async reads (agent-reads.ts), on either store. */
export interface AsyncChangeCursor {
  /** As AgentChangeCursor.latest. */
  latest(): Promise<number>;
  /** This process wrote agents: the next latest() reads the database again (read-your-writes). */
  moved(): void;
}

/** SQLite: the synchronous cursor above (total_changes() already sees this process's writes), read through the store's gate. */
export function sqliteAsyncChangeCursor(store: Store, cursor: AgentChangeCursor): AsyncChangeCursor {
  return { latest: () => gatedRead(store, () => cursor.latest()), moved: () => {} };
}

/**
 * The channel a statement on agents notifies when it commits (a statement trigger, PostgreSQL
 * migration 0004_agents_changed_notify): every insert, update, delete or truncate, by any process.
 */
export const AGENTS_CHANGED_CHANNEL = 'agentdir_agents_changed';

/**
 * PostgreSQL: max(change_seq), pushed rather than polled. Every statement on
 * agents notifies AGENTS_CHANGED_CHANNEL when its transaction commits; the
 * store's listening connection hears it, and only then is max(change_seq) read
 * again (once, shared by every reader waiting for it). While nothing changes,
 * readers read nothing from PostgreSQL.
 *
 * - This process's own writes: moved() (the write path, after commit) drops the
 *   value, so the very next read sees them without waiting for the notification.
 * - Another process's writes: seen once their notification arrives, which
 *   PostgreSQL sends right after the commit (well under a millisecond on a
 *   local server), not synchronously with it.
 * - Until the listening connection is up, and whenever it is lost, the cursor
 *   falls back to reading max(change_seq) at most once per event-loop turn (as
 *   before notifications); when it is up again the value is read afresh, which
 *   catches up on whatever was written meanwhile.
 */
export function pgChangeCursor(store: Store, rows: Pick<AgentRowReads, 'latestChangeSeq'>): AsyncChangeCursor {
  let seq: Promise<number> | undefined;
  /** The listener is up: a kept value stays good until a notification (or this process's write) drops it. */
  let pushed = false;
  let subscribed = false;
  let forgetScheduled = false;
  const forget = () => {
    forgetScheduled = false;
    if (!pushed) seq = undefined;
  };
  const drop = () => {
    seq = undefined;
  };
  return {
    latest() {
      if (!subscribed) {
        subscribed = true;
        store.listen(AGENTS_CHANGED_CHANNEL, {
          notified: drop,
          listening(on) {
            pushed = on;
            drop();
          },
        });
      }
      if (seq === undefined) {
        const read = rows.latestChangeSeq();
        seq = read;
        // A failed read is not kept: the next caller asks again.
        read.catch(() => {
          if (seq === read) seq = undefined;
        });
        if (!pushed && !forgetScheduled) {
          forgetScheduled = true;
          setImmediate(forget);
        }
      }
      return seq;
    },
    moved: drop,
  };
}

/**
 * Values read from the database and kept until the change cursor moves (an agent write in any
 * process): PostgreSQL's listed counts and list pages' ids, which would otherwise cost a round trip
 * each time. While a value is being read, callers asking for it share that read. Every agents column a
 * list can sort or filter on moves change_seq when it changes (as the profile cache also relies on).
 * At most `maxEntries` values, the oldest dropped first; nothing is kept from inside a transaction
 * (which may see rows not committed yet).
 */
export function untilChanged<T>(store: Store, changes: AsyncChangeCursor, maxEntries: number) {
  const values = new Map<string, Promise<T>>();
  let atSeq = Number.NaN;
  return async (key: string, read: () => Promise<T>): Promise<T> => {
    if (store.inTransaction) return read();
    const seq = await changes.latest();
    if (seq !== atSeq) {
      values.clear();
      atSeq = seq;
    }
    let value = values.get(key);
    if (value === undefined) {
      if (values.size >= maxEntries) values.delete(values.keys().next().value!);
      const reading = read();
      values.set(key, (value = reading));
      // A failed read is not kept: the next caller reads again.
      reading.catch(() => values.get(key) === reading && values.delete(key));
    }
    return value;
  };
}
