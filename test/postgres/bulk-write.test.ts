import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { BULK_WRITE_ROWS } from '../../src-api/db/bulk-write';
import type { Store } from '../../src-api/db/store';
import { systemClock } from '../../src-api/lib/clock';
import { createIdGenerator } from '../../src-api/lib/ids';
import { importAgents } from '../../src-api/modules/agents/agents-import';
import { agentParts } from '../helpers/agent-parts';
import { bothStores } from '../helpers/both-stores';

/**
 * A bulk import leaves its table ready for reads on PostgreSQL: vacuumed (pages all-visible, so list pages are
 * index-only scans) and analyzed, at once rather than when autovacuum comes round (db/bulk-write.ts).
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const records = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    value: { name: `Bulk ${from + i}`, tagline: 'Imported in bulk', source_url: `https://example.com/bulk-${from + i}` },
    line: i + 1,
  }));

/** The agents table's manual VACUUM and ANALYZE counts (autovacuum's are counted apart), and its all-visible pages. */
async function maintenance(store: Store) {
  const [row] = await store.all<{ vacuums: string; analyzes: string; visible: number; pages: number }>(sql`
    SELECT s.vacuum_count AS vacuums, s.analyze_count AS analyzes, c.relallvisible AS visible, c.relpages AS pages
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'agents'`);
  return { vacuums: Number(row!.vacuums), analyzes: Number(row!.analyzes), visible: row!.visible, pages: row!.pages };
}

describe.each(stores.dialects.filter((s) => s.dialect === 'postgres'))('bulk import on $dialect', ({ open }) => {
  it(`vacuums and analyzes agents after an import that writes ${BULK_WRITE_ROWS} rows or more, not after a smaller one`, async () => {
    const store = await open();
    const ids = createIdGenerator();
    const { audit, writes } = agentParts(store, { ids });
    const deps = { store, clock: systemClock, ids, audit, agentWrites: writes };

    await importAgents(deps, records(0, BULK_WRITE_ROWS - 1));
    const before = await maintenance(store);
    expect(before).toMatchObject({ vacuums: 0, analyzes: 0 });

    const summary = await importAgents(deps, records(BULK_WRITE_ROWS, BULK_WRITE_ROWS));
    expect(summary.created).toBe(BULK_WRITE_ROWS);
    const after = await maintenance(store);
    expect(after).toMatchObject({ vacuums: 1, analyzes: 1 });
    expect(after.pages).toBeGreaterThan(0);
    expect(after.visible).toBe(after.pages);
  }, 120_000);
});
