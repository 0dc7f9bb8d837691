import { databaseTarget, type Config } from '../config';
import { openDatabase, type Db } from './client';
import type { Store } from './store';
import { sqliteStore } from './store-sqlite';

/**
 * The directory's database as `--database` names it (config.ts databaseTarget), opened and migrated:
 * SQLite (the data dir's file or `sqlite:<path>`, created when missing) or PostgreSQL (a pool;
 * migrations under an advisory lock, so processes starting together migrate once). `serve` and
 * every `cli` command open it here and hand the Store to createServices.
 */
export interface OpenedStore {
  store: Store;
  /** The SQLite connection under `store`; undefined on PostgreSQL. */
  db: Db | undefined;
  /** Closes the connection or the pool. */
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  /** SQLite migrations folder, when not running from the source tree (Electron). */
  migrationsFolder?: string;
  /** PostgreSQL pool size (node-postgres' default: 10). */
  poolSize?: number;
}

/** Opens the database of `config`. PostgreSQL: unreachable or refusing us, a PostgresConnectError with one line to say. */
export async function openStore(config: Pick<Config, 'dataDir' | 'databaseUrl'>, options: OpenStoreOptions = {}): Promise<OpenedStore> {
  const target = databaseTarget(config);
  if (target.dialect === 'postgres') {
    // Loaded only for PostgreSQL: the pg client and drizzle's node-postgres driver are ~0.2 G instructions
    // of every process's start (a cli import of 100,000 agents on SQLite runs ~30 G).
    const { openPgStore } = await import('./store-pg');
    const store = await openPgStore(target.url, { ...(options.poolSize !== undefined && { max: options.poolSize }) });
    return { store, db: undefined, close: () => store.close() };
  }
  const db = openDatabase(target.file, { migrationsFolder: options.migrationsFolder });
  return {
    store: sqliteStore(db),
    db,
    close: async () => {
      db.$client.close();
    },
  };
}
