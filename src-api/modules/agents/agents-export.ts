import { asc, gt } from 'drizzle-orm';
import type { Db } from '../../db/client';
import type { AgentProfile } from './agents.schemas';
import { toAgentProfile } from './agent-profile';
import { agents } from './agents.table';

/**
 * Export of agents as JSONL (`cli export`): one API profile per line, in id
 * order, from one consistent snapshot of the database (a read transaction, which
 * in WAL mode does not block writers). `agents-import.ts` reads it back.
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

/** Hands the JSONL text to `write` in chunks of whole lines; returns how many agents it wrote. */
export function exportAgents(db: Db, write: (chunk: string) => void, options: ExportOptions = {}): number {
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
      let chunk = '';
      for (const row of rows) {
        if (!includeUnlisted && !row.listed) continue;
        count++;
        const line: ExportedAgent = includeUnlisted ? { ...toAgentProfile(row), listed: row.listed } : toAgentProfile(row);
        chunk += `${JSON.stringify(line)}\n`;
      }
      if (chunk) write(chunk);
      after = rows[rows.length - 1]!.id;
    }
  })();
}
