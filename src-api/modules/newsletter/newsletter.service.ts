import { and, asc, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { InvalidTokenError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { PublicUrl } from '../../lib/public-url';
import type { Page } from '../../lib/schemas';
import { createSyncOneTimeTokens } from '../accounts/tokens';
import type { AuditService } from '../audit/audit.service';
import type { MailService } from '../mail/mail.service';
import { toCsv } from './csv';
import { CONFIRM_TTL_MS, MAILS_PER_ADDRESS_PER_HOUR, newsletterMails, UNSUBSCRIBE_TTL_MS } from './newsletter-mails';
import type { ListSubscribersQuery, Subscriber, SubscriberStatus, Subscription } from './newsletter.schemas';
import { newsletterSubscribers, type NewsletterSubscriberRow } from './newsletter.table';

export interface NewsletterServiceDeps {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  mail: MailService;
  publicUrl: PublicUrl;
  /** Where exports by a moderator are recorded; the list is personal data. */
  audit?: AuditService;
}

/** "Ann@Example.com " and "ann@example.com" are one subscriber. */
export function emailKeyOf(email: string): string {
  return email.trim().toLowerCase();
}

function toSubscriber(row: NewsletterSubscriberRow): Subscriber {
  return { id: row.id, email: row.email, status: row.status, created_at: row.createdAt, confirmed_at: row.confirmedAt };
}

export const SUBSCRIBERS_CSV_HEADER = ['email', 'status', 'subscribed_at'] as const;

/**
 * The newsletter with double opt-in. Signing up only mails the address (a
 * confirmation link, or a notice when it is on the list already); following
 * the link subscribes it. Callers learn nothing about an address's state: the
 * answer to a sign-up is made from the request alone, and every branch does
 * the same kind of work (one lookup, token rows, one queued mail) in one
 * transaction, so that the mail and its cause commit together.
 */
export function createNewsletterService({ db, clock, ids, mail, publicUrl, audit }: NewsletterServiceDeps) {
  const table = newsletterSubscribers;
  const tokens = createSyncOneTimeTokens({ db, clock, ids });
  const mails = newsletterMails(publicUrl);

  const byId = (id: string): NewsletterSubscriberRow | undefined => db.select().from(table).where(eq(table.id, id)).get();
  /** The subscriber a token names; a token whose subscriber is gone is as good as unknown. */
  const subscriberOf = (subjectId: string): NewsletterSubscriberRow => {
    const row = byId(subjectId);
    if (!row) throw new InvalidTokenError();
    return row;
  };
  const confirmationTo = (row: Pick<NewsletterSubscriberRow, 'id' | 'email'>): void => {
    mail.queue(
      mails.confirm(row.email, {
        confirm: tokens.issue('newsletter_confirm', row.id, CONFIRM_TTL_MS),
        unsubscribe: tokens.issue('newsletter_unsubscribe', row.id, UNSUBSCRIBE_TTL_MS),
      }),
    );
  };

  // Every newsletter mail carries exactly one new unsubscribe token: counting them counts the mails.
  const mailsInLastHour = (subscriberId: string): number =>
    tokens.countIssuedSince('newsletter_unsubscribe', subscriberId, new Date(clock.now().getTime() - 60 * 60_000).toISOString());

  return {
    /**
     * A sign-up: mails a confirmation link to a new, pending or unsubscribed
     * address, and a notice (with its unsubscribe link) to a subscribed one;
     * at most MAILS_PER_ADDRESS_PER_HOUR mails an hour per address.
     * Returns nothing on purpose: the caller must not tell the cases apart.
     */
    requestSubscription(email: string): void {
      const trimmed = email.trim();
      const emailKey = emailKeyOf(trimmed);
      // One write transaction: two requests for the same address cannot both insert.
      inTransaction(db, () => {
        const existing = db.select().from(table).where(eq(table.emailKey, emailKey)).get();
        if (!existing) {
          const row = { id: ids.next('nls'), email: trimmed, emailKey, status: 'pending' as const, createdAt: isoNow(clock) };
          db.insert(table).values(row).run();
          confirmationTo(row);
        } else if (mailsInLastHour(existing.id) >= MAILS_PER_ADDRESS_PER_HOUR) {
          // Enough mail for this address for now: the same answer, no mail.
        } else if (existing.status === 'subscribed') {
          mail.queue(mails.alreadySubscribed(existing.email, tokens.issue('newsletter_unsubscribe', existing.id, UNSUBSCRIBE_TTL_MS)));
        } else {
          // Pending: a new link, the older ones keep working until they expire. Unsubscribed: opting in again.
          confirmationTo(existing);
        }
      });
    },

    /** Follows a confirmation link: the address is subscribed. Single-use, 48 h; 400 invalid_token otherwise. */
    confirm(token: string): Subscription {
      return inTransaction(db, () => {
        const row = subscriberOf(tokens.consume('newsletter_confirm', token));
        db.update(table)
          .set({ status: 'subscribed', confirmedAt: isoNow(clock), unsubscribedAt: null })
          .where(eq(table.id, row.id))
          .run();
        // Other confirmation links of the address end with this one.
        tokens.revokeAll('newsletter_confirm', row.id);
        return { email: row.email, status: 'subscribed' };
      });
    },

    /**
     * Follows an unsubscribe link (from any newsletter mail, any number of times):
     * the address leaves the list, and pending confirmation links stop working.
     */
    unsubscribe(token: string): Subscription {
      return inTransaction(db, () => {
        const row = subscriberOf(tokens.consume('newsletter_unsubscribe', token, { reusable: true }));
        if (row.status !== 'unsubscribed') {
          db.update(table)
            .set({ status: 'unsubscribed', unsubscribedAt: isoNow(clock) })
            .where(eq(table.id, row.id))
            .run();
        }
        tokens.revokeAll('newsletter_confirm', row.id);
        return { email: row.email, status: 'unsubscribed' };
      });
    },

    /** Console: newest first; `q` is any part of the address, case-insensitive; `status` filters. */
    list(query: ListSubscribersQuery): Page<Subscriber> {
      const where: SQL | undefined = and(
        query.q ? sql`instr(${table.emailKey}, ${query.q.toLowerCase()}) > 0` : undefined,
        query.status ? eq(table.status, query.status) : undefined,
      );
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
     * The mailing list: confirmed subscribers only, oldest first, as CSV that is
     * safe to open in a spreadsheet. Given an actor (a moderator), the export is
     * audited: it hands out personal data.
     */
    exportCsv(options: { actor?: string } = {}): string {
      const rows = db
        .select()
        .from(table)
        .where(eq(table.status, 'subscribed'))
        .orderBy(asc(table.createdAt), asc(sql`${table}.rowid`))
        .all();
      if (options.actor && audit) {
        audit.record({
          actor: options.actor,
          action: 'newsletter.export',
          entityType: 'newsletter',
          entityId: 'subscribers',
          after: { rows: rows.length, subscribed: rows.length },
        });
      }
      return toCsv(
        SUBSCRIBERS_CSV_HEADER,
        // Rows from before double opt-in have no confirmation time: they were subscribed when created.
        rows.map((row) => [row.email, row.status, row.confirmedAt ?? row.createdAt]),
      );
    },

    /** How many addresses are confirmed subscribers now. */
    count(): number {
      return db.select({ n: count() }).from(table).where(eq(table.status, 'subscribed')).get()?.n ?? 0;
    },

    /** Addresses by state: confirmed, waiting for their link, gone. */
    counts(): Record<SubscriberStatus, number> {
      const counts: Record<SubscriberStatus, number> = { pending: 0, subscribed: 0, unsubscribed: 0 };
      for (const row of db.select({ status: table.status, n: count() }).from(table).groupBy(table.status).all()) counts[row.status] = row.n;
      return counts;
    },
  };
}

export type NewsletterService = ReturnType<typeof createNewsletterService>;
