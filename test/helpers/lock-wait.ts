import { sql } from 'drizzle-orm';
import type { Store } from '../../src-api/db/store';

/**
 * PostgreSQL: resolves once some session of `store`'s database waits for a lock (a row, an
 * advisory lock), or once `settled()` is true: what a transaction started meanwhile did first.
 * Polls pg_locks from a pooled connection of its own; asserts no time.
 */
export async function lockWaitOrSettled(store: Store, settled: () => boolean): Promise<void> {
  for (;;) {
    if (settled()) return;
    const [row] = await store.all<{ n: string | number }>(
      sql`SELECT count(*) AS n FROM pg_locks WHERE NOT granted AND (database IS NULL OR database = (SELECT oid FROM pg_database WHERE datname = current_database()))`,
    );
    if (Number(row?.n) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
