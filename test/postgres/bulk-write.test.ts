import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { copyData } from '../../src-api/cli/copy-data';
import { BULK_WRITE_ROWS } from '../../src-api/db/bulk-write';
import { openDatabase } from '../../src-api/db/client';
import type { Store } from '../../src-api/db/store';
import { sqliteStore } from '../../src-api/db/store-sqlite';
import { systemClock } from '../../src-api/lib/clock';
import { createIdGenerator } from '../../src-api/lib/ids';
import { importAgents } from '../../src-api/modules/agents/agents-import';
import { agentParts } from '../helpers/agent-parts';
import { bothStores } from '../helpers/both-stores';
import { startPostgres } from '../helpers/postgres-server';
import { makeTempDir } from '../helpers/temp-dir';

/**
 * A bulk import leaves its table ready for reads on PostgreSQL: vacuumed (pages all-visible, so list pages are
 * index-only scans) and analyzed, at once rather than when autovacuum comes round (db/bulk-write.ts); so does
 * `cli copy-data` into PostgreSQL, for each table it filled with that many rows.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const records = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    value: { name: `Bulk ${from + i}`, tagline: 'Imported in bulk', source_url: `https://example.com/bulk-${from + i}` },
    line: i + 1,
  }));

/** A table's manual VACUUM and ANALYZE counts (autovacuum's are counted apart), and its all-visible pages. */
const MAINTENANCE = (table: string) => `
  SELECT s.vacuum_count AS vacuums, s.analyze_count AS analyzes, c.relallvisible AS visible, c.relpages AS pages
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = '${table}'`;
async function maintenance(store: Store, table = 'agents') {
  const [row] = await store.all<{ vacuums: string; analyzes: string; visible: number; pages: number }>(sql.raw(MAINTENANCE(table)));
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

describe('cli copy-data into PostgreSQL', () => {
  it(`vacuums and analyzes each table it filled with ${BULK_WRITE_ROWS} rows or more, and no other`, async () => {
    const dir = makeTempDir('agentdir-bulk-copy-');
    const postgres = await startPostgres();
    try {
      const file = path.join(dir, 'agent-directory.sqlite');
      const db = openDatabase(file);
      const store = sqliteStore(db);
      const ids = createIdGenerator();
      const { audit, writes } = agentParts(store, { ids });
      // One import: BULK_WRITE_ROWS agents, one audit row.
      await importAgents({ store, clock: systemClock, ids, audit, agentWrites: writes }, records(0, BULK_WRITE_ROWS), { actor: 'cli' });
      db.$client.close();
      postgres.query('CREATE DATABASE copied');
      const summary = await copyData(`sqlite:${file}`, postgres.urlOf('copied'));
      expect(summary.tables.find((t) => t.table === 'agents')?.rows).toBe(BULK_WRITE_ROWS);
      expect(summary.tables.find((t) => t.table === 'audit_log')?.rows).toBe(1);
      const read = (table: string) => postgres.query(MAINTENANCE(table).replace(/\s+/g, ' '), 'copied').trim().split('|').map(Number);
      const [vacuums, analyzes, visible, pages] = read('agents');
      expect({ vacuums, analyzes }).toEqual({ vacuums: 1, analyzes: 1 });
      expect(pages).toBeGreaterThan(0);
      expect(visible).toBe(pages);
      expect(read('audit_log').slice(0, 2)).toEqual([0, 0]);
    } finally {
      postgres.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
