import { createHash, randomBytes } from 'node:crypto';
import { and, count, eq, gt, isNull } from 'drizzle-orm';
import type { Store } from '../../db/store';
import { InvalidTokenError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { OneTimeTokenPurpose } from './accounts.table';

/** 32 random bytes as base64url: the secret part of mail links and session cookies. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Tokens and session cookies are stored as SHA-256: they are random, so no slow hash is needed. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export interface OneTimeTokensDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
}

/** The row of a new token (the raw value goes into the mail, only its hash is kept), and that raw value. */
function newTokenRow(clock: Clock, ids: IdGenerator, purpose: OneTimeTokenPurpose, subjectId: string, ttlMs: number) {
  const token = newSecret();
  const now = clock.now();
  const row = {
    id: ids.next('tok'),
    purpose,
    subjectId,
    tokenHash: hashSecret(token),
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
    createdAt: now.toISOString(),
  };
  return { token, row };
}

/** The tokens of mail links, through the data-access seam; call `issue` and `consume` inside the caller's transaction. */
export function createOneTimeTokens({ store, clock, ids }: OneTimeTokensDeps) {
  return {
    /** A new token for `subjectId`; the raw value goes into the mail, only its hash is kept. */
    async issue(purpose: OneTimeTokenPurpose, subjectId: string, ttlMs: number): Promise<string> {
      const { token, row } = newTokenRow(clock, ids, purpose, subjectId, ttlMs);
      await store.run(store.db.insert(store.t.oneTimeTokens).values(row));
      return token;
    },

    /**
     * The subject of a live token of this purpose, marking it used unless `reusable`;
     * 400 invalid_token for unknown, expired, used or other-purpose tokens. Marking and
     * reading are one UPDATE … RETURNING: of two requests with the same link (PostgreSQL
     * runs them side by side), one gets the subject and the other invalid_token.
     */
    async consume(purpose: OneTimeTokenPurpose, token: string, options: { reusable?: boolean } = {}): Promise<string> {
      const { oneTimeTokens } = store.t;
      const now = isoNow(clock);
      const live = and(
        eq(oneTimeTokens.tokenHash, hashSecret(token)),
        eq(oneTimeTokens.purpose, purpose),
        gt(oneTimeTokens.expiresAt, now),
        options.reusable ? undefined : isNull(oneTimeTokens.usedAt),
      );
      const [row] = options.reusable
        ? await store.rows(store.db.select({ subjectId: oneTimeTokens.subjectId }).from(oneTimeTokens).where(live).limit(1))
        : await store.rows(
            store.db.update(oneTimeTokens).set({ usedAt: now }).where(live).returning({ subjectId: oneTimeTokens.subjectId }),
          );
      if (!row) throw new InvalidTokenError();
      return row.subjectId;
    },

    /** Ends every unused token of this purpose for the subject (a newer link replaces older ones). */
    async revokeAll(purpose: OneTimeTokenPurpose, subjectId: string): Promise<void> {
      const { oneTimeTokens } = store.t;
      await store.run(
        store.db
          .update(oneTimeTokens)
          .set({ usedAt: isoNow(clock) })
          .where(and(eq(oneTimeTokens.purpose, purpose), eq(oneTimeTokens.subjectId, subjectId), isNull(oneTimeTokens.usedAt))),
      );
    },

    /** How many tokens of this purpose were issued for the subject after `since` (ISO time): a cap on mails per address. */
    async countIssuedSince(purpose: OneTimeTokenPurpose, subjectId: string, since: string): Promise<number> {
      const { oneTimeTokens } = store.t;
      const counted = await store.first(
        store.db
          .select({ n: count() })
          .from(oneTimeTokens)
          .where(and(eq(oneTimeTokens.subjectId, subjectId), eq(oneTimeTokens.purpose, purpose), gt(oneTimeTokens.createdAt, since))),
      );
      return counted?.n ?? 0;
    },

    async deleteForSubject(subjectId: string): Promise<void> {
      await store.run(store.db.delete(store.t.oneTimeTokens).where(eq(store.t.oneTimeTokens.subjectId, subjectId)));
    },
  };
}

export type OneTimeTokens = ReturnType<typeof createOneTimeTokens>;
