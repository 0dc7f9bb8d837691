import { sql } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Store } from './store';

/** Rows written by one bulk write from which its table is vacuumed at once (autovacuum's own insert threshold: 1,000 + 20 % of the table). */
export const BULK_WRITE_ROWS = 1_000;

/**
 * After a bulk write (`cli import`) of `rows` rows into `table`, committed: on PostgreSQL, VACUUM (ANALYZE) the
 * table now instead of whenever autovacuum comes round to it (its naptime is a minute). Until then the new rows'
 * pages are not marked all-visible, so the list pages' index-only scans fetch every row they pass from the heap
 * (an offset of 980 reads 1,000 rows) and count(*) reads the whole table, and the planner has no statistics.
 * Measured (bench/tail-latency.ts --store postgres --phases list --cold, 100,000 agents just imported): with
 * autovacuum not yet run, list pages by type took up to 500 ms each and the phase served 255 req/s (p99 814 ms);
 * once vacuumed, 1,600-1,800 req/s cold (the pages' ids not cached yet) and ~2,100 warm. This VACUUM took 0.7 s.
 * SQLite keeps no visibility map: nothing to do there. Returns whether it vacuumed.
 */
export async function settleBulkWrite(store: Store, table: SQLiteTable, rows: number): Promise<boolean> {
  // VACUUM cannot run in a transaction block; a caller's transaction has not committed the rows yet anyway.
  if (store.dialect !== 'postgres' || rows < BULK_WRITE_ROWS || store.inTransaction) return false;
  try {
    await store.run(sql`VACUUM (ANALYZE) ${table}`);
    return true;
  } catch {
    // The write has committed: a VACUUM that fails (a lost connection) leaves the table to autovacuum, as before.
    return false;
  }
}
