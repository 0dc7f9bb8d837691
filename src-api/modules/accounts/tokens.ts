import { createHash, randomBytes } from 'node:crypto';
import { and, count, eq, gt, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { InvalidTokenError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { oneTimeTokens, type OneTimeTokenPurpose } from './accounts.table';

/** 32 random bytes as base64url: the secret part of mail links and session cookies. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Tokens and session cookies are stored as SHA-256: they are random, so no slow hash is needed. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export interface OneTimeTokensDeps {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
}

/** The tokens of mail links; call `issue` and `consume` inside the caller's transaction. */
export function createOneTimeTokens({ db, clock, ids }: OneTimeTokensDeps) {
  return {
    /** A new token for `subjectId`; the raw value goes into the mail, only its hash is kept. */
    issue(purpose: OneTimeTokenPurpose, subjectId: string, ttlMs: number): string {
      const token = newSecret();
      const now = clock.now();
      db.insert(oneTimeTokens)
        .values({
          id: ids.next('tok'),
          purpose,
          subjectId,
          tokenHash: hashSecret(token),
          expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
          createdAt: now.toISOString(),
        })
        .run();
      return token;
    },

    /**
     * The subject of a live token of this purpose, marking it used unless `reusable`;
     * 400 invalid_token for unknown, expired, used or other-purpose tokens.
     */
    consume(purpose: OneTimeTokenPurpose, token: string, options: { reusable?: boolean } = {}): string {
      const now = isoNow(clock);
      const row = db
        .select()
        .from(oneTimeTokens)
        .where(
          and(
            eq(oneTimeTokens.tokenHash, hashSecret(token)),
            eq(oneTimeTokens.purpose, purpose),
            gt(oneTimeTokens.expiresAt, now),
            options.reusable ? undefined : isNull(oneTimeTokens.usedAt),
          ),
        )
        .get();
      if (!row) throw new InvalidTokenError();
      if (!options.reusable) db.update(oneTimeTokens).set({ usedAt: now }).where(eq(oneTimeTokens.id, row.id)).run();
      return row.subjectId;
    },

    /** Ends every unused token of this purpose for the subject (a newer link replaces older ones). */
    revokeAll(purpose: OneTimeTokenPurpose, subjectId: string): void {
      db.update(oneTimeTokens)
        .set({ usedAt: isoNow(clock) })
        .where(and(eq(oneTimeTokens.purpose, purpose), eq(oneTimeTokens.subjectId, subjectId), isNull(oneTimeTokens.usedAt)))
        .run();
    },

    /** How many tokens of this purpose were issued for the subject after `since` (ISO time): a cap on mails per address. */
    countIssuedSince(purpose: OneTimeTokenPurpose, subjectId: string, since: string): number {
      return (
        db
          .select({ n: count() })
          .from(oneTimeTokens)
          .where(and(eq(oneTimeTokens.subjectId, subjectId), eq(oneTimeTokens.purpose, purpose), gt(oneTimeTokens.createdAt, since)))
          .get()?.n ?? 0
      );
    },

    deleteForSubject(subjectId: string): void {
      db.delete(oneTimeTokens).where(eq(oneTimeTokens.subjectId, subjectId)).run();
    },
  };
}

export type OneTimeTokens = ReturnType<typeof createOneTimeTokens>;
