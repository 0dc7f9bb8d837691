import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import type { Store } from '../../db/store';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { agents } from '../agents/agents.table';
import type { EventRow } from '../events/events.table';
import { webhookDeliveries, webhookEndpoints, type WebhookEndpointRow } from './webhooks.table';

/**
 * The fan-out of an event into pending deliveries (one per active endpoint
 * subscribed to its kind, and for "owned" endpoints only events about their
 * account's agents), run inside the transaction that records the event, so the
 * change, the event and its deliveries commit together.
 *
 * `inTransaction` is events.recordInTransaction's listener. Which endpoints get
 * a delivery and the rows they get are decided once (subscribersOf, pendingRow).
 * On SQLite it runs prepared statements (this is the hot path of every write);
 * on PostgreSQL it builds its queries on the transaction's handle and inserts
 * the deliveries in one statement. `enqueue` (a redelivery) goes through the
 * same insert.
 */

type Subscription = Pick<WebhookEndpointRow, 'id' | 'events' | 'scope' | 'ownerAccountId'>;

/** The values of one pending delivery (the prepared insert's parameters). */
type PendingRow = {
  id: string;
  eventId: string;
  endpointId: string;
  now: string;
};

export interface FanOutDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  /** Wakes this process's dispatcher; called once the deliveries are committed. */
  announce: () => void;
}

/** Whether the endpoint takes events of this kind at all (no owner check). */
const takesKind = (endpoint: Subscription, event: EventRow): boolean =>
  endpoint.events.length === 0 || endpoint.events.includes(event.type);

/** True when some endpoint's answer depends on who owns the event's agent: look the owner up only then. */
const needsAgentOwner = (endpoints: Subscription[], event: EventRow): boolean =>
  endpoints.some((endpoint) => endpoint.scope === 'owned' && endpoint.ownerAccountId !== null && takesKind(endpoint, event));

/** The agent an event is about, when it names one. */
const agentIdOf = (event: EventRow): string | undefined => {
  const agentId = (event.data as { agent_id?: unknown }).agent_id;
  return typeof agentId === 'string' ? agentId : undefined;
};

/** The endpoints that get a delivery of `event`; `agentOwner` is the owner account of the event's agent (null: none). */
export function subscribersOf(endpoints: Subscription[], event: EventRow, agentOwner: string | null): string[] {
  const ids: string[] = [];
  for (const endpoint of endpoints) {
    if (!takesKind(endpoint, event)) continue;
    if (endpoint.scope === 'owned' && (endpoint.ownerAccountId === null || agentOwner !== endpoint.ownerAccountId)) continue;
    ids.push(endpoint.id);
  }
  return ids;
}

export function createFanOut({ store, clock, ids, announce }: FanOutDeps) {
  const p = sql.placeholder;
  // Prepared on first use, on the SQLite store's connection (none on PostgreSQL).
  let prepared: ReturnType<typeof prepare> | undefined;
  const prepare = (on: Db) => ({
    on,
    activeEndpoints: on
      .select({
        id: webhookEndpoints.id,
        events: webhookEndpoints.events,
        scope: webhookEndpoints.scope,
        ownerAccountId: webhookEndpoints.ownerAccountId,
      })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.active, true))
      .prepare(),
    agentOwner: on
      .select({ ownerAccountId: agents.ownerAccountId })
      .from(agents)
      .where(eq(agents.id, p('agentId')))
      .prepare(),
    insertPending: on
      .insert(webhookDeliveries)
      .values({
        id: p('id'),
        eventId: p('eventId'),
        endpointId: p('endpointId'),
        status: 'pending',
        nextAttemptAt: p('now'),
        createdAt: p('now'),
        updatedAt: p('now'),
      })
      .prepare(),
  });
  const statements = (on: Db) => (prepared?.on === on ? prepared : (prepared = prepare(on)));

  /** One pending delivery's values: the one insert of deliveries, for the fan-out and enqueue alike. */
  const pendingRow = (eventId: string, endpointId: string, now: string): PendingRow => ({ id: ids.next('dlv'), eventId, endpointId, now });

  /** SQLite, on the store's connection, by the prepared statements. */
  const fanOutSqlite = (on: Db, event: EventRow): number => {
    const st = statements(on);
    // Read in the recording transaction: an endpoint committed by another process a moment ago counts.
    const endpoints = st.activeEndpoints.all();
    const agentId = agentIdOf(event);
    const owner =
      agentId !== undefined && needsAgentOwner(endpoints, event) ? (st.agentOwner.get({ agentId })?.ownerAccountId ?? null) : null;
    const now = isoNow(clock);
    const subscribers = subscribersOf(endpoints, event, owner);
    for (const endpointId of subscribers) st.insertPending.run(pendingRow(event.id, endpointId, now));
    return subscribers.length;
  };

  /** Pending deliveries through the store: SQLite runs the prepared insert per row, PostgreSQL one multi-row insert. */
  const insertPending = (rows: PendingRow[]): Promise<number> => {
    if (store.dialect === 'sqlite') {
      return store.run({
        run: () => {
          const st = statements(store.db);
          for (const row of rows) st.insertPending.run(row);
          return { changes: rows.length };
        },
      });
    }
    const { webhookDeliveries: deliveries } = store.t;
    return store.run(
      store.db.insert(deliveries).values(
        rows.map(({ id, eventId, endpointId, now }) => ({
          id,
          eventId,
          endpointId,
          status: 'pending' as const,
          nextAttemptAt: now,
          createdAt: now,
          updatedAt: now,
        })),
      ),
    );
  };

  const fanOutPostgres = async (event: EventRow): Promise<number> => {
    const { webhookEndpoints: endpointsTable, agents: agentsTable } = store.t;
    const endpoints = await store.rows(
      store.db
        .select({
          id: endpointsTable.id,
          events: endpointsTable.events,
          scope: endpointsTable.scope,
          ownerAccountId: endpointsTable.ownerAccountId,
        })
        .from(endpointsTable)
        .where(eq(endpointsTable.active, true)),
    );
    const agentId = agentIdOf(event);
    const owner =
      agentId !== undefined && needsAgentOwner(endpoints, event)
        ? ((
            await store.first(
              store.db.select({ ownerAccountId: agentsTable.ownerAccountId }).from(agentsTable).where(eq(agentsTable.id, agentId)),
            )
          )?.ownerAccountId ?? null)
        : null;
    const now = isoNow(clock);
    const subscribers = subscribersOf(endpoints, event, owner);
    if (subscribers.length === 0) return 0;
    return insertPending(subscribers.map((endpointId) => pendingRow(event.id, endpointId, now)));
  };

  return {
    /** In the caller's store transaction (events.recordInTransaction's listener); the dispatcher is told after commit. */
    async inTransaction(event: EventRow): Promise<number> {
      const queued =
        store.dialect === 'sqlite'
          ? await store.run({ run: () => ({ changes: fanOutSqlite(store.db, event) }) })
          : await fanOutPostgres(event);
      if (queued > 0) store.afterCommit(announce);
      return queued;
    },

    /**
     * A new pending delivery of an existing event to an endpoint (a redelivery), in the
     * caller's store transaction or on its own; the dispatcher is told once it is committed.
     */
    async enqueue(eventId: string, endpointId: string): Promise<string> {
      const row = pendingRow(eventId, endpointId, isoNow(clock));
      await insertPending([row]);
      if (store.inTransaction) store.afterCommit(announce);
      else announce();
      return row.id;
    },
  };
}

export type FanOut = ReturnType<typeof createFanOut>;
