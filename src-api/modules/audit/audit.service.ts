import { and, count, desc, eq, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client';
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

    list(query: { page: number; limit: number; entityType?: string; entityId?: string; actor?: string }): Page<AuditRow> {
      const filters: SQL[] = [];
      if (query.entityType) filters.push(eq(auditLog.entityType, query.entityType));
      if (query.entityId) filters.push(eq(auditLog.entityId, query.entityId));
      if (query.actor) filters.push(eq(auditLog.actor, query.actor));
      const where = filters.length ? and(...filters) : undefined;
      const items = db
        .select()
        .from(auditLog)
        .where(where)
        .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit)
        .all();
      const total = db.select({ n: count() }).from(auditLog).where(where).get()?.n ?? 0;
      return { items, page: query.page, limit: query.limit, total };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
