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
  /**
   * Another Store on the database of `store` (one `open()` gave): what a second process
   * would have. SQLite: a second connection to the file; PostgreSQL: a second pool.
   */
  openAgain(store: Store): Promise<Store>;
}

export function bothStores(): { dialects: StoreUnderTest[]; cleanup(): Promise<void> } {
  let postgres: TestPostgres | undefined;
  let databases = 0;
  const closers: Array<() => Promise<void> | void> = [];
  const reopeners = new Map<Store, () => Promise<Store>>();
  const openAgain = (store: Store): Promise<Store> => {
    const reopen = reopeners.get(store);
    if (!reopen) throw new Error('openAgain() takes a store that open() gave');
    return reopen();
  };
  const dialects: StoreUnderTest[] = [
    {
      dialect: 'sqlite',
      async open() {
        const dir = makeTempDir('agentdir-store-');
        const file = path.join(dir, 'agent-directory.sqlite');
        const db = openDatabase(file);
        const connections = [db];
        closers.push(() => {
          for (const connection of connections) connection.$client.close();
          fs.rmSync(dir, { recursive: true, force: true });
        });
        const store = sqliteStore(db);
        reopeners.set(store, async () => {
          const again = openDatabase(file);
          connections.push(again);
          return sqliteStore(again);
        });
        return store;
      },
      openAgain,
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
        reopeners.set(store, async () => {
          const again = await openPgStore(postgres!.urlOf(name), { max: 4 });
          closers.push(() => again.close());
          return again;
        });
        return store;
      },
      openAgain,
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
