import { and, asc, count, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { NotFoundError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { Page } from '../../lib/schemas';
import { auditLog, type AuditRow } from './audit.table';

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
  db: Db;
  clock: Clock;
  ids: IdGenerator;
}

/** The moderator audit log: call `record` inside the transaction of the action. */
export function createAuditService({ db, clock, ids }: AuditServiceDeps) {
  return {
    record(entry: AuditEntry): AuditRow {
      const row: AuditRow = {
        id: ids.next('aud'),
        actor: entry.actor,
        action: entry.action,
        entityType: entry.entityType,
        entityId: entry.entityId,
        before: entry.before ?? null,
        after: entry.after ?? null,
        createdAt: isoNow(clock),
      };
      db.insert(auditLog).values(row).run();
      return row;
    },

    /** Newest first. Every filter narrows: exact actor, action and entity, a substring of the entity id, a half-open time range. */
    list(query: AuditListQuery): Page<AuditRow> {
      const filters: SQL[] = [];
      if (query.entityType) filters.push(eq(auditLog.entityType, query.entityType));
      if (query.entityId) filters.push(eq(auditLog.entityId, query.entityId));
      if (query.actor) filters.push(eq(auditLog.actor, query.actor));
      if (query.action) filters.push(eq(auditLog.action, query.action));
      // instr() rather than LIKE: "_" and "%" in ids are plain characters, not wildcards.
      if (query.q) filters.push(sql`instr(lower(${auditLog.entityId}), ${query.q.toLowerCase()}) > 0`);
      if (query.from) filters.push(gte(auditLog.createdAt, query.from));
      if (query.to) filters.push(lt(auditLog.createdAt, query.to));
      const where = filters.length ? and(...filters) : undefined;
      const items = db
        .select()
        .from(auditLog)
        .where(where)
        // Entries of one millisecond keep the order they were written in (ids are random).
        .orderBy(desc(auditLog.createdAt), desc(sql`${auditLog}.rowid`))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit)
        .all();
      const total = db.select({ n: count() }).from(auditLog).where(where).get()?.n ?? 0;
      return { items, page: query.page, limit: query.limit, total };
    },

    get(id: string): AuditRow {
      const row = db.select().from(auditLog).where(eq(auditLog.id, id)).get();
      if (!row) throw new NotFoundError('Audit entry', id);
      return row;
    },

    /** The actors, actions and entity types that occur in the log, for the console's filter choices. */
    facets(): AuditFacets {
      const distinct = (column: typeof auditLog.actor | typeof auditLog.action | typeof auditLog.entityType): string[] =>
        db
          .selectDistinct({ value: column })
          .from(auditLog)
          .orderBy(asc(column))
          .all()
          .map((row) => row.value);
      return { actors: distinct(auditLog.actor), actions: distinct(auditLog.action), entityTypes: distinct(auditLog.entityType) };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
