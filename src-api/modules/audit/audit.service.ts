import { and, asc, count, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import { byteOrder, containsText, insertionOrder } from '../../db/dialect-sql';
import { requireTransaction, type Store } from '../../db/store';
import { NotFoundError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { Page } from '../../lib/schemas';
import type { AuditRow } from './audit.table';

export interface AuditEntry {
  actor: string;
  action: string;
  entityType: string;
  entityId: string;
  before?: unknown;
  after?: unknown;
}

export interface AuditListQuery {
  page: number;
  limit: number;
  entityType?: string;
  entityId?: string;
  actor?: string;
  action?: string;
  /** Part of the entity id, case-insensitive. */
  q?: string;
  /** ISO 8601 UTC; entries at or after this instant. */
  from?: string;
  /** ISO 8601 UTC; entries before this instant. */
  to?: string;
}

export interface AuditFacets {
  actors: string[];
  actions: string[];
  entityTypes: string[];
}

export interface AuditServiceDeps {
  /** The reads and `recordInTransaction` run through the data-access seam, on SQLite and PostgreSQL alike. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
}

/** The moderator audit log: record each entry inside the transaction of the action. */
export function createAuditService({ store, clock, ids }: AuditServiceDeps) {
  const rowOf = (entry: AuditEntry): AuditRow => ({
    id: ids.next('aud'),
    actor: entry.actor,
    action: entry.action,
    entityType: entry.entityType,
    entityId: entry.entityId,
    before: entry.before ?? null,
    after: entry.after ?? null,
    createdAt: isoNow(clock),
  });

  return {
    /** The entry, written in the caller's store transaction (throws outside one): committed or undone with the action. */
    async recordInTransaction(entry: AuditEntry): Promise<AuditRow> {
      requireTransaction(store, 'audit.recordInTransaction');
      const row = rowOf(entry);
      await store.run(store.db.insert(store.t.auditLog).values(row));
      return row;
    },

    /** Newest first. Every filter narrows: exact actor, action and entity, a substring of the entity id, a half-open time range. */
    async list(query: AuditListQuery): Promise<Page<AuditRow>> {
      const { auditLog } = store.t;
      const filters: SQL[] = [];
      if (query.entityType) filters.push(eq(auditLog.entityType, query.entityType));
      if (query.entityId) filters.push(eq(auditLog.entityId, query.entityId));
      if (query.actor) filters.push(eq(auditLog.actor, query.actor));
      if (query.action) filters.push(eq(auditLog.action, query.action));
      // A substring, not LIKE: "_" and "%" in ids are plain characters, not wildcards.
      if (query.q) filters.push(containsText(store, sql`lower(${auditLog.entityId})`, query.q.toLowerCase()));
      if (query.from) filters.push(gte(auditLog.createdAt, query.from));
      if (query.to) filters.push(lt(auditLog.createdAt, query.to));
      const where = filters.length ? and(...filters) : undefined;
      const items = await store.rows(
        store.db
          .select()
          .from(auditLog)
          .where(where)
          // Entries of one millisecond: on SQLite in the order they were written (ids are random).
          .orderBy(desc(auditLog.createdAt), desc(insertionOrder(store, auditLog)))
          .limit(query.limit)
          .offset((query.page - 1) * query.limit),
      );
      const total = (await store.first(store.db.select({ n: count() }).from(auditLog).where(where)))?.n ?? 0;
      return { items, page: query.page, limit: query.limit, total };
    },

    async get(id: string): Promise<AuditRow> {
      const { auditLog } = store.t;
      const row = await store.first(store.db.select().from(auditLog).where(eq(auditLog.id, id)));
      if (!row) throw new NotFoundError('Audit entry', id);
      return row;
    },

    /** The actors, actions and entity types that occur in the log, for the console's filter choices. */
    async facets(): Promise<AuditFacets> {
      const { auditLog } = store.t;
      const distinct = async (column: typeof auditLog.actor | typeof auditLog.action | typeof auditLog.entityType): Promise<string[]> => {
        const value = byteOrder(store, column);
        const rows = await store.rows(store.db.selectDistinct({ value }).from(auditLog).orderBy(asc(value)));
        return rows.map((row) => row.value);
      };
      return {
        actors: await distinct(auditLog.actor),
        actions: await distinct(auditLog.action),
        entityTypes: await distinct(auditLog.entityType),
      };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
