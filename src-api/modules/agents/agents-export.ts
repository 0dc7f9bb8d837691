import { asc, gt, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { byteOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { sqliteDbOf } from '../../db/store-sqlite';
import type { AgentProfile } from './agents.schemas';
import { toAgentProfile } from './agent-profile';
import { gatedRead } from './agent-rows';
import { agents, type AgentRow } from './agents.table';

/**
 * Export of agents as JSONL (`cli export`): one API profile per line, in id
 * (byte) order, from one consistent snapshot of the database. `agents-import.ts`
 * reads it back.
 *
 * Listed agents only, unless `includeUnlisted`: then every line also carries
 * `"listed": true|false`, so that a re-import keeps unlisted agents unlisted.
 */
export interface ExportOptions {
  includeUnlisted?: boolean;
  /** Rows read (and lines handed to `write`) per step. */
  batchSize?: number;
}

export type ExportedAgent = AgentProfile & { listed?: boolean };

/**
 * Hands the JSONL text to `write` in chunks of whole lines; resolves to how many agents it wrote.
 * SQLite: one read transaction (in WAL mode it does not block writers; a store transaction would
 * take the write lock). PostgreSQL: one REPEATABLE READ transaction, a snapshot for every page.
 */
export async function exportAgents(store: Store, write: (chunk: string) => void, options: ExportOptions = {}): Promise<number> {
  const { includeUnlisted = false, batchSize = 1000 } = options;
  const db = sqliteDbOf(store);
  // Through the store's gate: no store transaction of this process is open meanwhile.
  if (db) return gatedRead(store, () => exportAgentsSqlite(db, write, options));
  return store.transaction(
    async () => {
      const { agents } = store.t;
      let count = 0;
      let after: string | undefined;
      for (;;) {
        const rows = await store.rows(
          store.db
            .select()
            .from(agents)
            .where(after === undefined ? undefined : gt(byteOrder(store, agents.id), sql`${after} COLLATE "C"`))
            .orderBy(asc(byteOrder(store, agents.id)))
            .limit(batchSize),
        );
        if (rows.length === 0) return count;
        const page = lines(rows, includeUnlisted);
        count += page.count;
        if (page.chunk) write(page.chunk);
        after = rows[rows.length - 1]!.id;
      }
    },
    { isolation: 'repeatable read' },
  );
}

/** The SQLite export, synchronous (one read transaction); a caller's own read transaction may hold it (a snapshot with other reads). */
export function exportAgentsSqlite(db: Db, write: (chunk: string) => void, options: ExportOptions = {}): number {
  const { includeUnlisted = false, batchSize = 1000 } = options;
  return db.$client.transaction(() => {
    let count = 0;
    let after: string | undefined;
    for (;;) {
      // Keyset paging on the primary key. `listed` is filtered here, not in SQL: a
      // `listed = 1` term makes SQLite pick a listed_* index and sort every page.
      const rows = db
        .select()
        .from(agents)
        .where(after === undefined ? undefined : gt(agents.id, after))
        .orderBy(asc(agents.id))
        .limit(batchSize)
        .all();
      if (rows.length === 0) return count;
      const page = lines(rows, includeUnlisted);
      count += page.count;
      if (page.chunk) write(page.chunk);
      after = rows[rows.length - 1]!.id;
    }
  })();
}

/** A page of rows as JSONL lines (listed ones only, unless `includeUnlisted`). */
function lines(rows: AgentRow[], includeUnlisted: boolean): { chunk: string; count: number } {
  let chunk = '';
  let count = 0;
  for (const row of rows) {
    if (!includeUnlisted && !row.listed) continue;
    count++;
    const line: ExportedAgent = includeUnlisted ? { ...toAgentProfile(row), listed: row.listed } : toAgentProfile(row);
    chunk += `${JSON.stringify(line)}\n`;
  }
  return { chunk, count };
}
