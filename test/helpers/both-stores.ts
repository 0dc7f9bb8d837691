import fs from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../src-api/db/client';
import type { Dialect, Store } from '../../src-api/db/store';
import { openPgStore } from '../../src-api/db/store-pg';
import { sqliteStore } from '../../src-api/db/store-sqlite';
import type { AgentRow } from '../../src-api/modules/agents/agents.table';
import { startPostgres, type TestPostgres } from './postgres-server';
import { makeTempDir } from './temp-dir';

/**
 * The two stores a parametrised suite runs its cases on: SQLite in a new temp
 * file, PostgreSQL in a new database of one real server started (once per test
 * file) on first use. `cleanup()` closes them and stops the server.
 */
export interface StoreUnderTest {
  dialect: Dialect;
  open(): Promise<Store>;
}

export function bothStores(): { dialects: StoreUnderTest[]; cleanup(): Promise<void> } {
  let postgres: TestPostgres | undefined;
  let databases = 0;
  const closers: Array<() => Promise<void> | void> = [];
  const dialects: StoreUnderTest[] = [
    {
      dialect: 'sqlite',
      async open() {
        const dir = makeTempDir('agentdir-store-');
        const db = openDatabase(path.join(dir, 'agent-directory.sqlite'));
        closers.push(() => {
          db.$client.close();
          fs.rmSync(dir, { recursive: true, force: true });
        });
        return sqliteStore(db);
      },
    },
    {
      dialect: 'postgres',
      async open() {
        postgres ??= await startPostgres();
        const name = `store_${++databases}`;
        // A natural-language collation (the server's default is C): text sorted without COLLATE "C" would not match SQLite's byte order.
        postgres.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
        const store = await openPgStore(postgres.urlOf(name), { max: 4 });
        closers.push(() => store.close());
        return store;
      },
    },
  ];
  return {
    dialects,
    async cleanup() {
      for (const close of closers.splice(0)) await close();
      postgres?.stop();
    },
  };
}

/** A complete agents row: JSON arrays and objects, booleans, a null, a 53-bit integer and a real. */
export function agentRow(overrides: Partial<AgentRow> = {}): AgentRow {
  return {
    id: 'agt_store',
    name: 'Store “agent” 🚀',
    tagline: 'Written once, read on both stores',
    description: 'line one\nline two',
    author: 'Ada',
    capabilities: ['search', 'ünïcødé'],
    categories: ['developer-tools'],
    type: 'coding',
    sourceUrl: 'https://example.org/store',
    sourceUrlKey: 'example.org/store',
    verified: true,
    listed: true,
    status: 'active',
    statusMessage: null,
    ownerAccountId: null,
    ownerName: null,
    agentCardUrl: null,
    skills: [{ id: 's1', name: 'Search', description: 'finds things', tags: ['a', 'b'] }],
    agentCardEtag: null,
    agentCardFetchedAt: null,
    trustScore: 0.1 + 0.2,
    ratingCount: 0,
    ratingSum: 0,
    version: 1,
    changeSeq: 2 ** 52 + 1,
    createdAt: '2026-11-01T12:00:00.000Z',
    updatedAt: '2026-11-25T18:00:00.123Z',
    ...overrides,
  };
}
