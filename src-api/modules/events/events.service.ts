import { desc, eq } from 'drizzle-orm';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/client';
import { insertionOrder } from '../../db/dialect-sql';
import { requireTransaction, type Store } from '../../db/store';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { EventRow, EventType } from './events.table';

/**
 * What runs when an event is recorded (the webhook fan-out, marketing drafts): awaited inside
 * the recording store transaction (events.recordInTransaction).
 */
export type EventListener = (event: EventRow) => Promise<void>;

export interface EventsServiceDeps {
  /** recordInTransaction writes through it, in the caller's store transaction; the reads too. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
}

/**
 * The outbox. An event is recorded inside the transaction of the change that
 * caused it, so the two are committed (or lost) together.
 */
export function createEventsService({ store, clock, ids }: EventsServiceDeps) {
  const listeners: EventListener[] = [];
  // Prepared on first use (a PostgreSQL-only setup has no SQLite Db), per connection: recording
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
      for (const listener of listeners) await listener(row);
      return row;
    },

    get(id: string): Promise<EventRow | undefined> {
      const { events } = store.t;
      return store.first(store.db.select().from(events).where(eq(events.id, id)).limit(1));
    },

    /** Newest first (events of one millisecond: on SQLite in the order they were written). */
    listRecent(limit = 100): Promise<EventRow[]> {
      const { events } = store.t;
      return store.rows(
        store.db
          .select()
          .from(events)
          .orderBy(desc(events.createdAt), desc(insertionOrder(store, events)))
          .limit(limit),
      );
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
