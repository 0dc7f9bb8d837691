import { desc, eq } from 'drizzle-orm';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/client';
import { requireTransaction, type Store } from '../../db/store';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { events, type EventRow, type EventType } from './events.table';

/**
 * What runs when an event is recorded, inside the recording transaction (the
 * webhook fan-out, marketing drafts). In two forms while both recorders exist:
 * `sync` for `record`, `inTransaction` for `recordInTransaction`; each builds
 * its rows once and only the execution differs.
 */
export interface EventListener {
  /** Inside the caller's sync db transaction (events.record). */
  sync(event: EventRow): void;
  /** Awaited inside the caller's store transaction (events.recordInTransaction). */
  inTransaction(event: EventRow): Promise<void>;
}

export interface EventsServiceDeps {
  db: Db;
  /** recordInTransaction writes through it, in the caller's store transaction. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
}

/**
 * The outbox. An event is recorded inside the transaction of the change that
 * caused it, so the two are committed (or lost) together.
 */
export function createEventsService({ db, store, clock, ids }: EventsServiceDeps) {
  const listeners: EventListener[] = [];
  // Prepared on first use (a PostgreSQL-only setup has no SQLite Db), per connection (the sync
  // form's Db and a SQLite store's are the same one when createServices wires them): recording
  // runs inside every write, where query building would be a third of the cost.
  const prepared = new WeakMap<Db, Statement>();
  const insertSqlite = (on: Db, row: EventRow) => {
    let statement = prepared.get(on);
    if (!statement)
      prepared.set(on, (statement = on.$client.prepare('INSERT INTO events (id, type, data, created_at) VALUES (?, ?, ?, ?)')));
    return statement.run(row.id, row.type, JSON.stringify(row.data), row.createdAt);
  };
  const rowOf = (type: EventType, data: Record<string, unknown>): EventRow => ({
    id: ids.next('evt'),
    type,
    data,
    createdAt: isoNow(clock),
  });

  return {
    /** Listeners run in the caller's transaction, in the order they were added. */
    addListener(listener: EventListener): void {
      listeners.push(listener);
    },

    /**
     * The sync form, inside a sync `inTransaction(db, …)`, for the callers not yet on
     * the Store: agent-writes' sync path (agents.service's sync create and edits, kept
     * for tests and benches; also test/webhooks and bench/ported-writes-ab.ts). Goes with them.
     */
    record<T extends Record<string, unknown>>(type: EventType, data: T): EventRow {
      const row = rowOf(type, data);
      insertSqlite(db, row);
      for (const listener of listeners) listener.sync(row);
      return row;
    },

    /**
     * Records the event in the caller's store transaction (throws outside one) and
     * awaits its listeners there, one after another: the change, the event, its
     * webhook deliveries and its marketing drafts commit together.
     */
    async recordInTransaction<T extends Record<string, unknown>>(type: EventType, data: T): Promise<EventRow> {
      requireTransaction(store, 'events.recordInTransaction');
      const row = rowOf(type, data);
      // SQLite keeps its prepared insert (the hot path of every write); PostgreSQL builds it.
      if (store.dialect === 'sqlite') await store.run({ run: () => insertSqlite(store.db, row) });
      else await store.run(store.db.insert(store.t.events).values(row));
      for (const listener of listeners) await listener.inTransaction(row);
      return row;
    },

    get(id: string): EventRow | undefined {
      return db.select().from(events).where(eq(events.id, id)).get();
    },

    listRecent(limit = 100): EventRow[] {
      return db.select().from(events).orderBy(desc(events.createdAt)).limit(limit).all();
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
