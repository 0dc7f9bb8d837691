import { asc, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AuditService } from '../audit/audit.service';
import type { Page } from '../../lib/schemas';
import { toCsv } from './csv';
import type { ListSubscribersQuery, Subscriber, Subscription } from './newsletter.schemas';
import { newsletterSubscribers, type NewsletterSubscriberRow } from './newsletter.table';

export interface NewsletterServiceDeps {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  /** Where exports by a moderator are recorded; the list is personal data. */
  audit?: AuditService;
}

export interface SubscribeResult {
  subscription: Subscription;
  /** False when the address (in any case) was already on the list. */
  created: boolean;
}

/** "Ann@Example.com " and "ann@example.com" are one subscriber. */
export function emailKeyOf(email: string): string {
  return email.trim().toLowerCase();
}

function toSubscriber(row: NewsletterSubscriberRow): Subscriber {
  return { id: row.id, email: row.email, status: row.status, created_at: row.createdAt };
}

export const SUBSCRIBERS_CSV_HEADER = ['email', 'status', 'subscribed_at'] as const;

export function createNewsletterService({ db, clock, ids, audit }: NewsletterServiceDeps) {
  const table = newsletterSubscribers;

  return {
    /** Adds the address, or (re)confirms the existing subscription of the same address in any case. */
    subscribe(email: string): SubscribeResult {
      const trimmed = email.trim();
      const emailKey = emailKeyOf(trimmed);
      // One write transaction: two requests for the same address cannot both insert.
      return inTransaction(db, () => {
        const existing = db.select().from(table).where(eq(table.emailKey, emailKey)).get();
        if (existing) {
          if (existing.status !== 'subscribed') db.update(table).set({ status: 'subscribed' }).where(eq(table.id, existing.id)).run();
          return { subscription: { email: existing.email, status: 'subscribed' }, created: false };
        }
        db.insert(table)
          .values({ id: ids.next('nls'), email: trimmed, emailKey, status: 'subscribed', createdAt: isoNow(clock) })
          .run();
        return { subscription: { email: trimmed, status: 'subscribed' }, created: true };
      });
    },

    /** Console: newest first; `q` is any part of the address, case-insensitive. */
    list(query: ListSubscribersQuery): Page<Subscriber> {
      const where: SQL | undefined = query.q ? sql`instr(${table.emailKey}, ${query.q.toLowerCase()}) > 0` : undefined;
      const rows = db
        .select()
        .from(table)
        .where(where)
        .orderBy(desc(table.createdAt), desc(sql`${table}.rowid`))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit)
        .all();
      const total = db.select({ n: count() }).from(table).where(where).get()?.n ?? 0;
      return { items: rows.map(toSubscriber), page: query.page, limit: query.limit, total };
    },

    /**
     * Every subscriber, oldest first, as CSV that is safe to open in a spreadsheet.
     * Given an actor (a moderator), the export is audited: it hands out personal data.
     */
    exportCsv(options: { actor?: string } = {}): string {
      const rows = db
        .select()
        .from(table)
        .orderBy(asc(table.createdAt), asc(sql`${table}.rowid`))
        .all();
      if (options.actor && audit) {
        audit.record({
          actor: options.actor,
          action: 'newsletter.export',
          entityType: 'newsletter',
          entityId: 'subscribers',
          after: { rows: rows.length, subscribed: rows.filter((row) => row.status === 'subscribed').length },
        });
      }
      return toCsv(
        SUBSCRIBERS_CSV_HEADER,
        rows.map((row) => [row.email, row.status, row.createdAt]),
      );
    },

    /** How many addresses are currently subscribed. */
    count(): number {
      return db.select({ n: count() }).from(table).where(eq(table.status, 'subscribed')).get()?.n ?? 0;
    },
  };
}

export type NewsletterService = ReturnType<typeof createNewsletterService>;
