import { sql } from 'drizzle-orm';
import type { Store } from '../../src-api/db/store';

/**
 * What tests read straight from the database, through the Store, so the same
 * assertion holds on SQLite and on PostgreSQL (AGENTDIR_TEST_STORE=postgres).
 */

/** Rows in `table`. */
export async function countRows(store: Store, table: string): Promise<number> {
  const [row] = await store.all<{ n: number | string }>(sql`SELECT count(*) AS n FROM ${sql.identifier(table)}`);
  return Number(row?.n ?? 0);
}

/** The application's tables (not the migrations' own), sorted. */
export async function tableNames(store: Store): Promise<string[]> {
  const rows =
    store.dialect === 'sqlite'
      ? await store.all<{ name: string }>(
          sql`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%'`,
        )
      : // drizzle keeps its migrations table in the schema "drizzle".
        await store.all<{ name: string }>(sql`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'`);
  return rows.map((row) => row.name).sort();
}

/** Rows of every table, by name. */
export async function tableCounts(store: Store): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await tableNames(store)) counts[table] = await countRows(store, table);
  return counts;
}
