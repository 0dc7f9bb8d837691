import { desc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { events, type EventRow, type EventType } from './events.table';

/** Called inside the recording transaction, e.g. to fan out webhook deliveries or generate posts. */
export type EventListener = (event: EventRow) => void;

export interface EventsServiceDeps {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
}

/**
 * The outbox. `record` must be called inside the transaction of the change
 * that caused the event, so the two are committed (or lost) together.
 */
export function createEventsService({ db, clock, ids }: EventsServiceDeps) {
  const listeners: EventListener[] = [];
  // Prepared once: recording runs inside every write, where query building would be a third of the cost.
  const insertEvent = db.$client.prepare('INSERT INTO events (id, type, data, created_at) VALUES (?, ?, ?, ?)');

  return {
    /** Listeners run in the caller's transaction, in the order they were added. */
    addListener(listener: EventListener): void {
      listeners.push(listener);
    },

    record<T extends Record<string, unknown>>(type: EventType, data: T): EventRow {
      const row: EventRow = { id: ids.next('evt'), type, data, createdAt: isoNow(clock) };
      insertEvent.run(row.id, row.type, JSON.stringify(row.data), row.createdAt);
      for (const listener of listeners) listener(row);
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
