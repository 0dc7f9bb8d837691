import path from 'node:path';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { createPrivateDirIfMissing, ensurePrivateFile, fixMode, PRIVATE_FILE_MODE } from '../lib/private-files';
import { projectPath } from '../lib/project-root';
import * as schema from './schema';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

/** Where the generated migrations live in the project: the same folder for the sources (tsx) and for out/api. */
export function defaultMigrationsFolder(): string {
  return projectPath('resources', 'migrations');
}

export interface OpenDatabaseOptions {
  /** Folder of drizzle-kit migrations; the Electron build passes its packaged copy. */
  migrationsFolder?: string;
}

/**
 * Opens (creating when missing) the one SQLite file of a data dir, in WAL mode
 * so that a server and a CLI command can share it, and brings it up to date.
 */
export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Db {
  // 0600 file before SQLite opens it: SQLite gives the -wal and -shm files the database file's mode. Its
  // folder is made 0700 only when created here: with --database sqlite:<path> it may be a shared one (a
  // copy-data into /tmp made /tmp 0700 once). The data dir's own mode is fixed by serve (admin-token.ts).
  createPrivateDirIfMissing(path.dirname(file));
  ensurePrivateFile(file);
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  // Files left by an older version (or copied in) may have a wider mode than their database now has.
  for (const suffix of ['-wal', '-shm']) fixMode(`${file}${suffix}`, PRIVATE_FILE_MODE);
  // Another process may hold the write lock briefly (cli import while serving): wait, don't fail.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  const db = drizzle(sqlite, { schema }) as Db;
  migrateOnce(db, options.migrationsFolder ?? defaultMigrationsFolder());
  return db;
}

/**
 * Applies the pending migrations, once even when several processes open the
 * same new file at the same moment (contract section 8). drizzle reads which
 * migrations are applied before it takes the write lock, so two processes can
 * both decide to run the first one; the loser's CREATE TABLE fails and rolls
 * back. By then the winner has recorded its migrations, so a second pass finds
 * them applied and does nothing (or fails again for a real reason).
 */
function migrateOnce(db: Db, migrationsFolder: string): void {
  try {
    migrate(db, { migrationsFolder });
  } catch {
    migrate(db, { migrationsFolder });
  }
}

/**
 * Runs `work` in one write transaction. BEGIN IMMEDIATE takes the write lock
 * up front, so two processes never deadlock upgrading a read lock.
 */
export function inTransaction<T>(db: Db, work: () => T): T {
  return db.$client.transaction(work).immediate();
}
