import { eq } from 'drizzle-orm';
import type { AccountsConfig } from '../../config';
import type { Store } from '../../db/store';
import type { Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { hashSecret, newSecret } from './tokens';

export const SESSION_COOKIE = 'agentdir_session';

export interface SessionsDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  config: AccountsConfig;
}

/** Writing last_seen_at on every request would make each one a write; once a minute is precise enough for a 7-day idle limit. */
const TOUCH_EVERY_MS = 60_000;

/** Browser sessions: a random cookie value, stored hashed, ending after 7 days idle or 30 days in all. */
export function createSessions({ store, clock, ids, config }: SessionsDeps) {
  return {
    /** Starts a session; returns the cookie value and when it ends at the latest. */
    async create(accountId: string): Promise<{ token: string; expiresAt: Date }> {
      const token = newSecret();
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + config.sessionAbsoluteMs);
      await store.run(
        store.db.insert(store.t.sessions).values({
          id: ids.next('ses'),
          accountId,
          tokenHash: hashSecret(token),
          createdAt: now.toISOString(),
          lastSeenAt: now.toISOString(),
          expiresAt: expiresAt.toISOString(),
        }),
      );
      return { token, expiresAt };
    },

    /** The account id of a live session, or undefined; an expired session is deleted on sight. */
    async authenticate(token: string): Promise<string | undefined> {
      const { sessions } = store.t;
      const row = await store.first(
        store.db
          .select()
          .from(sessions)
          .where(eq(sessions.tokenHash, hashSecret(token)))
          .limit(1),
      );
      if (!row) return undefined;
      const now = clock.now().getTime();
      const idleEnd = new Date(row.lastSeenAt).getTime() + config.sessionIdleMs;
      if (now >= idleEnd || now >= new Date(row.expiresAt).getTime()) {
        await store.run(store.db.delete(sessions).where(eq(sessions.id, row.id)));
        return undefined;
      }
      if (now - new Date(row.lastSeenAt).getTime() > TOUCH_EVERY_MS) {
        await store.run(
          store.db
            .update(sessions)
            .set({ lastSeenAt: new Date(now).toISOString() })
            .where(eq(sessions.id, row.id)),
        );
      }
      return row.accountId;
    },

    async end(token: string): Promise<void> {
      await store.run(store.db.delete(store.t.sessions).where(eq(store.t.sessions.tokenHash, hashSecret(token))));
    },

    async endAll(accountId: string): Promise<void> {
      await store.run(store.db.delete(store.t.sessions).where(eq(store.t.sessions.accountId, accountId)));
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
