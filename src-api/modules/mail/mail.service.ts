import { and, asc, count, eq, inArray, isNotNull, lte, min, or, sql, type SQL } from 'drizzle-orm';
import type { MailConfig } from '../../config';
import { requireTransaction, type Store } from '../../db/store';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { renderMail, type MailContent } from './mail-templates';
import { mailOutbox, type MailRow, type MailStatus } from './mail.table';

export interface MailServiceDeps {
  /** queueInTransaction in the caller's store transaction, the worker's claims and bookkeeping, the reads. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  config: { mail: MailConfig };
}

export interface QueueMailInput extends MailContent {
  kind: string;
  to: string;
  headers?: Record<string, string>;
}

/** A sender holds a claimed mail this long; if it crashes, the mail is sent again after that. */
const LEASE_MS = 2 * 60_000;

/**
 * The mail outbox. `queueInTransaction` is called inside the transaction of the change
 * that causes the mail, so both commit or neither does; the mail worker
 * claims due rows under a lease, sends them, and records the outcome.
 */
export function createMailService({ store, clock, ids, config }: MailServiceDeps) {
  const listeners = new Set<() => void>();
  const delays = config.mail.retryDelaysMs;

  const dueWhere = (now: string): SQL => {
    const { mailOutbox } = store.t;
    return or(
      and(eq(mailOutbox.status, 'pending'), lte(mailOutbox.nextAttemptAt, now)),
      and(eq(mailOutbox.status, 'sending'), isNotNull(mailOutbox.leaseExpiresAt), lte(mailOutbox.leaseExpiresAt, now)),
    )!;
  };

  /** The outbox row of a new mail: rendered now, due at once. */
  const rowOf = (input: QueueMailInput): typeof mailOutbox.$inferInsert & { id: string } => {
    const rendered = renderMail(input);
    const now = isoNow(clock);
    return {
      id: ids.next('mail'),
      kind: input.kind,
      to: input.to,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      headers: input.headers ?? {},
      status: 'pending',
      nextAttemptAt: now,
      createdAt: now,
    };
  };
  const wakeListeners = (): void => {
    for (const listener of listeners) setImmediate(listener);
  };

  return {
    /** Adds a mail to the outbox in the caller's store transaction (throws outside one); returns the mail id. */
    async queueInTransaction(input: QueueMailInput): Promise<string> {
      requireTransaction(store, 'mail.queueInTransaction');
      const row = rowOf(input);
      await store.run(store.db.insert(store.t.mailOutbox).values(row));
      // The worker is woken once the row is committed: on PostgreSQL the commit is a round trip away.
      store.afterCommit(wakeListeners);
      return row.id;
    },

    /** Called when this process queues mail; returns the unsubscribe function. */
    onQueued(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /**
     * Takes up to `max` due mails under `owner`'s lease: pending ones whose time has come, and ones
     * whose sender's lease ran out (it crashed or stalled). On PostgreSQL the due rows are locked
     * with SKIP LOCKED, so workers of other processes claiming at the same moment take other mails,
     * never the same one; on SQLite the transaction holds the only write lock.
     */
    async claimDue(owner: string, max: number): Promise<MailRow[]> {
      return store.transaction(async () => {
        const { mailOutbox } = store.t;
        const now = clock.now();
        const rows = await store.rows(
          store.forUpdate(
            store.db.select().from(mailOutbox).where(dueWhere(now.toISOString())).orderBy(asc(mailOutbox.nextAttemptAt)).limit(max),
            { skipLocked: true },
          ),
        );
        if (rows.length === 0) return [];
        const leaseExpiresAt = new Date(now.getTime() + LEASE_MS).toISOString();
        await store.run(
          store.db
            .update(mailOutbox)
            .set({ status: 'sending', leaseOwner: owner, leaseExpiresAt })
            .where(
              inArray(
                mailOutbox.id,
                rows.map((row) => row.id),
              ),
            ),
        );
        return rows.map((row) => ({ ...row, status: 'sending' as const, leaseOwner: owner, leaseExpiresAt }));
      });
    },

    /** Marks a mail sent, if `owner` still holds its lease; false when another sender took it over meanwhile. */
    async recordSent(id: string, owner: string, deliveredTo: string): Promise<boolean> {
      const { mailOutbox } = store.t;
      const changed = await store.run(
        store.db
          .update(mailOutbox)
          .set({
            status: 'sent',
            sentAt: isoNow(clock),
            deliveredTo,
            lastError: null,
            leaseOwner: null,
            leaseExpiresAt: null,
            attemptCount: sql`${mailOutbox.attemptCount} + 1`,
          })
          .where(and(eq(mailOutbox.id, id), eq(mailOutbox.leaseOwner, owner))),
      );
      return changed > 0;
    },

    /**
     * Schedules the next attempt with backoff, or gives up after the last configured delay; only
     * while `owner` holds the lease (the attempt count is the claimed row's: nobody else wrote it since).
     */
    async recordFailure(row: MailRow, owner: string, error: string): Promise<{ willRetry: boolean }> {
      const { mailOutbox } = store.t;
      const attempts = row.attemptCount + 1;
      const delay = delays[attempts - 1];
      const willRetry = delay !== undefined;
      // Up to ±20 % jitter so that many mails queued together do not hit a recovering server at once.
      const jittered = willRetry ? delay + Math.round(delay * 0.2 * (Math.random() * 2 - 1)) : 0;
      await store.run(
        store.db
          .update(mailOutbox)
          .set({
            status: willRetry ? 'pending' : 'failed',
            attemptCount: attempts,
            lastError: error.slice(0, 500),
            nextAttemptAt: new Date(clock.now().getTime() + jittered).toISOString(),
            leaseOwner: null,
            leaseExpiresAt: null,
          })
          .where(and(eq(mailOutbox.id, row.id), eq(mailOutbox.leaseOwner, owner))),
      );
      return { willRetry };
    },

    /** When the next pending mail is due (retries), if any. */
    async nextDueAt(): Promise<Date | undefined> {
      const { mailOutbox } = store.t;
      const row = await store.first(
        store.db
          .select({ at: min(mailOutbox.nextAttemptAt) })
          .from(mailOutbox)
          .where(eq(mailOutbox.status, 'pending')),
      );
      return row?.at ? new Date(row.at) : undefined;
    },

    /** Mails by status: for metrics and the console. */
    async countsByStatus(): Promise<Record<MailStatus, number>> {
      const { mailOutbox } = store.t;
      const counts: Record<MailStatus, number> = { pending: 0, sending: 0, sent: 0, failed: 0 };
      const rows = await store.rows(store.db.select({ status: mailOutbox.status, n: count() }).from(mailOutbox).groupBy(mailOutbox.status));
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },

    async get(id: string): Promise<MailRow | undefined> {
      const { mailOutbox } = store.t;
      return store.first(store.db.select().from(mailOutbox).where(eq(mailOutbox.id, id)));
    },
  };
}

export type MailService = ReturnType<typeof createMailService>;
