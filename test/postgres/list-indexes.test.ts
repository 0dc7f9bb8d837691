import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src-api/db/client';
import type { Store } from '../../src-api/db/store';
import { openPgStore } from '../../src-api/db/store-pg';
import { ratingSortSql } from '../../src-api/modules/agents/trust-score';
import { startPostgres, type TestPostgres } from '../helpers/postgres-server';
import { makeTempDir } from '../helpers/temp-dir';

/**
 * On PostgreSQL the agents' list pages sort text in byte order (COLLATE "C", as SQLite), whatever
 * the database's collation: agents.id and agents.name are byte-order columns (db/pg-columns.ts), so
 * the list indexes serve the name sort and keyset pages by id. In a database with a natural-language
 * collation, a page sorted by a plain text column would be a sort of every listed agent instead.
 * The rating sort has its own expression indexes (trust-score.ts ratingSortSql), on SQLite too.
 */
let postgres: TestPostgres;
let store: Store;
beforeAll(async () => {
  postgres = await startPostgres();
  postgres.query(`CREATE DATABASE lists TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  store = await openPgStore(postgres.urlOf('lists'), { max: 2 });
}, 180_000);
afterAll(async () => {
  await store?.close();
  postgres?.stop();
});

/**
 * The plan PostgreSQL picks for `query` when sequential scans, bitmap scans and sorts are its last
 * resort (the test table is small, where they would win): a Sort left in it means no index gives the order.
 */
async function planOf(query: string): Promise<string> {
  return store.transaction(async () => {
    for (const setting of ['enable_seqscan', 'enable_bitmapscan', 'enable_sort']) await store.all(sql.raw(`SET LOCAL ${setting} = off`));
    const rows = (await store.all(sql.raw(`EXPLAIN ${query}`))) as { 'QUERY PLAN': string }[];
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

describe('agents list pages on PostgreSQL walk an index in byte order', () => {
  it('the name sort (with and without the type filter) reads agents_list_name_idx in order, no sort', async () => {
    const page = await planOf(`SELECT id FROM agents WHERE listed ORDER BY name COLLATE "C" DESC, id COLLATE "C" DESC LIMIT 20`);
    expect(page).toMatch(/Index (Only )?Scan Backward using agents_list_name_idx/);
    expect(page).not.toMatch(/Sort/);
    const typed = await planOf(`SELECT id FROM agents WHERE listed AND type = 'coding' ORDER BY name COLLATE "C", id COLLATE "C" LIMIT 20`);
    expect(typed).toMatch(/Index (Only )?Scan using agents_list_type_name_idx/);
    expect(typed).not.toMatch(/Sort/);
  });

  it('sort=rating, both directions, with and without the type filter: that direction’s rating index, no sort', async () => {
    for (const direction of ['desc', 'asc'] as const) {
      const key = ratingSortSql('postgres', direction);
      const page = await planOf(`SELECT id FROM agents WHERE listed ORDER BY ${key} ${direction}, id COLLATE "C" ${direction} LIMIT 20 OFFSET 40`);
      expect(page).toMatch(new RegExp(`Index (Only )?Scan (Backward )?using agents_list_rating_${direction}_idx`));
      expect(page).not.toMatch(/Sort/);
      const typed = await planOf(
        `SELECT id FROM agents WHERE listed AND type = 'coding' ORDER BY ${key} ${direction}, id COLLATE "C" ${direction} LIMIT 20`,
      );
      expect(typed).toMatch(new RegExp(`Index (Only )?Scan (Backward )?using agents_list_rating_${direction}_idx`));
      expect(typed).not.toMatch(/Sort/);
    }
  });

  it('a keyset page by id reads the primary key from the last id on, no sort', async () => {
    const plan = await planOf(`SELECT * FROM agents WHERE id COLLATE "C" > 'agt_m' AND listed ORDER BY id COLLATE "C" LIMIT 100`);
    expect(plan).toMatch(/Index Scan using agents_pkey/);
    expect(plan).toMatch(/Index Cond: \(id > 'agt_m'/);
    expect(plan).not.toMatch(/Sort/);
  });

  it('byte order it is: upper case before lower case, as on SQLite', async () => {
    const rows = (await store.all(sql.raw(`SELECT x FROM (VALUES ('alpha'), ('Zeta'), ('beta')) v(x) ORDER BY x::text COLLATE "C"`))) as { x: string }[];
    expect(rows.map((row) => row.x)).toEqual(['Zeta', 'alpha', 'beta']);
    const stored = (await store.all(
      sql.raw(`SELECT collation_name FROM information_schema.columns WHERE table_name = 'agents' AND column_name IN ('id', 'name') ORDER BY column_name`),
    )) as { collation_name: string }[];
    expect(stored.map((row) => row.collation_name)).toEqual(['C', 'C']);
  });
});

describe('on SQLite, sort=rating walks its index too', () => {
  it('both directions, with and without the type filter: a covering index in order, no temporary sort', () => {
    const dir = makeTempDir('agentdir-list-indexes-');
    const db = openDatabase(path.join(dir, 'agent-directory.sqlite'));
    try {
      for (const direction of ['desc', 'asc'] as const)
        for (const type of ['', ' AND "type" = ?']) {
          const query = `SELECT "id" FROM "agents" WHERE "listed" = 1${type} ORDER BY ${ratingSortSql('sqlite', direction)} ${direction}, "id" ${direction} LIMIT ? OFFSET ?`;
          const steps = db.$client.prepare(`EXPLAIN QUERY PLAN ${query}`).all(...(type ? ['coding'] : []), 20, 40) as { detail: string }[];
          const plan = steps.map((step) => step.detail).join(' | ');
          expect(plan).toContain(`USING COVERING INDEX agents_list_rating_${direction}_idx`);
          expect(plan).not.toContain('TEMP B-TREE');
        }
    } finally {
      db.$client.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
