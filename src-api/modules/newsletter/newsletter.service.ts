import { and, asc, count, desc, eq, type SQL } from 'drizzle-orm';
import { containsText, insertionOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { InvalidTokenError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { PublicUrl } from '../../lib/public-url';
import type { Page } from '../../lib/schemas';
import { createOneTimeTokens } from '../accounts/tokens';
import type { AuditService } from '../audit/audit.service';
import type { MailService } from '../mail/mail.service';
import { toCsv } from './csv';
import { CONFIRM_TTL_MS, MAILS_PER_ADDRESS_PER_HOUR, newsletterMails, UNSUBSCRIBE_TTL_MS } from './newsletter-mails';
import type { ListSubscribersQuery, Subscriber, SubscriberStatus, Subscription } from './newsletter.schemas';
import type { NewsletterSubscriberRow } from './newsletter.table';

export interface NewsletterServiceDeps {
  /** Unused since the port to the Store; kept so every service takes the same base deps. */
  store: Store;
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
 * transaction, so that the mail and its cause commit together. On the Store
 * (SQLite and PostgreSQL).
 */
export function createNewsletterService({ store, clock, ids, mail, publicUrl, audit }: NewsletterServiceDeps) {
  const tokens = createOneTimeTokens({ store, clock, ids });
  const mails = newsletterMails(publicUrl);

  const byId = (id: string): Promise<NewsletterSubscriberRow | undefined> =>
    store.first(store.db.select().from(store.t.newsletterSubscribers).where(eq(store.t.newsletterSubscribers.id, id)));
  const byEmailKey = (emailKey: string): Promise<NewsletterSubscriberRow | undefined> =>
    store.first(store.db.select().from(store.t.newsletterSubscribers).where(eq(store.t.newsletterSubscribers.emailKey, emailKey)));
  /** The subscriber a token names; a token whose subscriber is gone is as good as unknown. */
  const subscriberOf = async (subjectId: string): Promise<NewsletterSubscriberRow> => {
    const row = await byId(subjectId);
    if (!row) throw new InvalidTokenError();
    return row;
  };
  const confirmationTo = async (row: Pick<NewsletterSubscriberRow, 'id' | 'email'>): Promise<void> => {
    const confirm = await tokens.issue('newsletter_confirm', row.id, CONFIRM_TTL_MS);
    const unsubscribe = await tokens.issue('newsletter_unsubscribe', row.id, UNSUBSCRIBE_TTL_MS);
    await mail.queueInTransaction(mails.confirm(row.email, { confirm, unsubscribe }));
  };

  // Every newsletter mail carries exactly one new unsubscribe token: counting them counts the mails.
  const mailsInLastHour = (subscriberId: string): Promise<number> =>
    tokens.countIssuedSince('newsletter_unsubscribe', subscriberId, new Date(clock.now().getTime() - 60 * 60_000).toISOString());

  return {
    /**
     * A sign-up: mails a confirmation link to a new, pending or unsubscribed
     * address, and a notice (with its unsubscribe link) to a subscribed one;
     * at most MAILS_PER_ADDRESS_PER_HOUR mails an hour per address.
     * Resolves to nothing on purpose: the caller must not tell the cases apart.
     */
    async requestSubscription(email: string): Promise<void> {
      const trimmed = email.trim();
      const emailKey = emailKeyOf(trimmed);
      await store.transaction(async () => {
        let existing = await byEmailKey(emailKey);
        if (!existing) {
          const row = { id: ids.next('nls'), email: trimmed, emailKey, status: 'pending' as const, createdAt: isoNow(clock) };
          // Two sign-ups of one address at once (side by side on PostgreSQL): the unique email key lets one insert;
          // the other waits for it and then takes the existing-address branch.
          const inserted = await store.run(
            store.db
              .insert(store.t.newsletterSubscribers)
              .values(row)
              .onConflictDoNothing({ target: store.t.newsletterSubscribers.emailKey }),
          );
          if (inserted === 1) return confirmationTo(row);
          existing = await byEmailKey(emailKey);
          if (!existing) return; // removed again in between: nothing to mail
        }
        if ((await mailsInLastHour(existing.id)) >= MAILS_PER_ADDRESS_PER_HOUR) {
          // Enough mail for this address for now: the same answer, no mail.
        } else if (existing.status === 'subscribed') {
          const unsubscribe = await tokens.issue('newsletter_unsubscribe', existing.id, UNSUBSCRIBE_TTL_MS);
          await mail.queueInTransaction(mails.alreadySubscribed(existing.email, unsubscribe));
        } else {
          // Pending: a new link, the older ones keep working until they expire. Unsubscribed: opting in again.
          await confirmationTo(existing);
        }
      });
    },

    /** Follows a confirmation link: the address is subscribed. Single-use, 48 h; 400 invalid_token otherwise. */
    confirm(token: string): Promise<Subscription> {
      return store.transaction(async () => {
        const row = await subscriberOf(await tokens.consume('newsletter_confirm', token));
        const { newsletterSubscribers: table } = store.t;
        await store.run(
          store.db
            .update(table)
            .set({ status: 'subscribed', confirmedAt: isoNow(clock), unsubscribedAt: null })
            .where(eq(table.id, row.id)),
        );
        // Other confirmation links of the address end with this one.
        await tokens.revokeAll('newsletter_confirm', row.id);
        return { email: row.email, status: 'subscribed' as const };
      });
    },

    /**
     * Follows an unsubscribe link (from any newsletter mail, any number of times):
     * the address leaves the list, and pending confirmation links stop working.
     */
    unsubscribe(token: string): Promise<Subscription> {
      return store.transaction(async () => {
        const row = await subscriberOf(await tokens.consume('newsletter_unsubscribe', token, { reusable: true }));
        const { newsletterSubscribers: table } = store.t;
        if (row.status !== 'unsubscribed') {
          await store.run(
            store.db
              .update(table)
              .set({ status: 'unsubscribed', unsubscribedAt: isoNow(clock) })
              .where(eq(table.id, row.id)),
          );
        }
        await tokens.revokeAll('newsletter_confirm', row.id);
        return { email: row.email, status: 'unsubscribed' as const };
      });
    },

    /** Console: newest first; `q` is any part of the address, case-insensitive; `status` filters. */
    async list(query: ListSubscribersQuery): Promise<Page<Subscriber>> {
      const { newsletterSubscribers: table } = store.t;
      const where: SQL | undefined = and(
        query.q ? containsText(store, table.emailKey, query.q.toLowerCase()) : undefined,
        query.status ? eq(table.status, query.status) : undefined,
      );
      const rows = await store.rows(
        store.db
          .select()
          .from(table)
          .where(where)
          .orderBy(desc(table.createdAt), desc(insertionOrder(store, table)))
          .limit(query.limit)
          .offset((query.page - 1) * query.limit),
      );
      const total = (await store.first(store.db.select({ n: count() }).from(table).where(where)))?.n ?? 0;
      return { items: rows.map(toSubscriber), page: query.page, limit: query.limit, total };
    },

    /**
     * The mailing list: confirmed subscribers only, oldest first, as CSV that is
     * safe to open in a spreadsheet. Given an actor (a moderator), the export is
     * audited (in the same transaction as the read): it hands out personal data.
     */
    exportCsv(options: { actor?: string } = {}): Promise<string> {
      return store.transaction(async () => {
        const { newsletterSubscribers: table } = store.t;
        const rows = await store.rows(
          store.db
            .select()
            .from(table)
            .where(eq(table.status, 'subscribed'))
            .orderBy(asc(table.createdAt), asc(insertionOrder(store, table))),
        );
        if (options.actor && audit) {
          await audit.recordInTransaction({
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
      });
    },

    /** How many addresses are confirmed subscribers now. */
    async count(): Promise<number> {
      const { newsletterSubscribers: table } = store.t;
      return (await store.first(store.db.select({ n: count() }).from(table).where(eq(table.status, 'subscribed'))))?.n ?? 0;
    },

    /** Addresses by state: confirmed, waiting for their link, gone. */
    async counts(): Promise<Record<SubscriberStatus, number>> {
      const { newsletterSubscribers: table } = store.t;
      const counts: Record<SubscriberStatus, number> = { pending: 0, subscribed: 0, unsubscribed: 0 };
      for (const row of await store.rows(store.db.select({ status: table.status, n: count() }).from(table).groupBy(table.status))) {
        counts[row.status] = row.n;
      }
      return counts;
    },
  };
}

export type NewsletterService = ReturnType<typeof createNewsletterService>;
