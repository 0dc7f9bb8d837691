import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { databasePath, type Config } from '../../config';
import { defaultMigrationsFolder } from '../../db/client';
import type { Store } from '../../db/store';
import { AppError, BackupFailedError, ConflictError, InvalidBackupError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../lib/private-files';
import type { AuditService } from '../audit/audit.service';

/**
 * Consistent copies of the data dir's database while a server writes
 * (SQLite's online backup API, in one step: one read snapshot, which in WAL
 * mode does not block writers), and restores of such a copy into a data dir.
 * The CLI (`backup`, `restore`) and the console (`backup.create`) both come
 * through here. The last backup is recorded in `<data-dir>/last-backup.json`.
 */

export interface BackupSummary {
  /** Absolute path of the backup file. */
  file: string;
  taken_at: string;
  bytes: number;
  /** Agents in the copy, listed or not. */
  agents: number;
  /** max(change_seq) of the agents in the copy: the moment of the directory it holds. */
  change_cursor: number;
}

const LAST_BACKUP_FILE = 'last-backup.json';
/** Folder of backups made from the console, inside the data dir. */
export const BACKUPS_FOLDER = 'backups';
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** Pages per backup step: all of them, so that the copy is one read snapshot and never restarts under writes. */
const ALL_PAGES = 0x7fffffff;

/** The copy's own figures, read from it after it was written. */
function describeCopy(file: string): Omit<BackupSummary, 'file' | 'taken_at'> {
  const copy = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const row = copy.prepare('SELECT count(*) AS agents, coalesce(max(change_seq), 0) AS cursor FROM agents').get() as {
      agents: number;
      cursor: number;
    };
    return { bytes: fs.statSync(file).size, agents: row.agents, change_cursor: row.cursor };
  } finally {
    copy.close();
  }
}

/**
 * Copies `source` (an open connection to a data dir's database) to `target`:
 * written beside it with mode 0600, made self-contained (rollback journal, no
 * -wal file), checked, then renamed over `target`.
 */
export async function backupDatabase(source: Database.Database, target: string, clock: Clock): Promise<BackupSummary> {
  const file = path.resolve(target);
  if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new BackupFailedError(`${target} is a directory`);
  if (!fs.statSync(path.dirname(file), { throwIfNoEntry: false })?.isDirectory()) {
    throw new BackupFailedError(`the folder of ${target} does not exist`);
  }
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    fs.closeSync(fs.openSync(temp, 'wx', PRIVATE_FILE_MODE));
    const takenAt = isoNow(clock);
    await source.backup(temp, { progress: () => ALL_PAGES });
    const copy = new Database(temp);
    try {
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new BackupFailedError(`the copy failed its integrity check: ${String(check)}`);
    } finally {
      copy.close();
    }
    fs.chmodSync(temp, PRIVATE_FILE_MODE);
    fs.renameSync(temp, file);
    return { file, taken_at: takenAt, ...describeCopy(file) };
  } catch (error) {
    fs.rmSync(temp, { force: true });
    fs.rmSync(`${temp}-journal`, { force: true });
    if (error instanceof AppError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new BackupFailedError(
      code === 'EACCES' || code === 'EPERM'
        ? `cannot write ${target}: permission denied`
        : `cannot write ${target}: ${(error as Error).message}`,
    );
  }
}

/** Newest migration (drizzle's `when`, ms) this build knows. */
function newestKnownMigration(migrationsFolder: string): number {
  const journal = JSON.parse(fs.readFileSync(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
    entries: { when: number }[];
  };
  return Math.max(0, ...journal.entries.map((entry) => entry.when));
}

/** Refuses anything but a sound SQLite database of this application, no newer than this build. */
export function validateBackupFile(file: string, migrationsFolder = defaultMigrationsFolder()): void {
  let header: Buffer;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      header = Buffer.alloc(SQLITE_HEADER.length);
      fs.readSync(fd, header, 0, header.length, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InvalidBackupError(
      code === 'ENOENT'
        ? `${file}: no such file`
        : code === 'EISDIR'
          ? `${file} is a directory`
          : `cannot read ${file}: ${code ?? String(error)}`,
    );
  }
  if (!header.equals(SQLITE_HEADER)) throw new InvalidBackupError(`${file} is not a SQLite database`);

  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new InvalidBackupError(`${file} cannot be opened as a SQLite database: ${(error as Error).message}`);
  }
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new InvalidBackupError(`${file} is damaged: ${String(check)}`);
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name),
    );
    if (!tables.has('__drizzle_migrations') || !tables.has('agents')) {
      throw new InvalidBackupError(`${file} is a SQLite database, but not one of Agent Directory`);
    }
    const newest =
      (db.prepare('SELECT max(created_at) AS newest FROM __drizzle_migrations').get() as { newest: number | null }).newest ?? 0;
    if (newest > newestKnownMigration(migrationsFolder)) {
      throw new InvalidBackupError(`${file} was made by a newer version of Agent Directory; restore it with that version or a later one`);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new InvalidBackupError(`${file} cannot be read: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}

/**
 * True when another connection (a running server, a CLI command) has the
 * database open: leaving WAL mode needs the only connection, so SQLite
 * refuses it then.
 */
function databaseInUse(file: string): boolean {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 0');
    try {
      return db.pragma('journal_mode = DELETE', { simple: true }) !== 'delete';
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
    }
  } finally {
    db.close();
  }
}

export interface RestoreOptions {
  /** Replace the database of a data dir that is not empty. */
  force?: boolean;
  migrationsFolder?: string;
}

/**
 * Puts the backup `file` in place as the database of `dataDir`. The data dir
 * must be empty (or missing) unless `force`; even then, never under a running
 * server. The caller opens the database afterwards (which migrates an older
 * copy forward).
 */
export function restoreBackup(file: string, dataDir: string, options: RestoreOptions = {}): { database: string; agents: number } {
  validateBackupFile(file, options.migrationsFolder);
  const entries = fs.existsSync(dataDir) ? fs.readdirSync(dataDir) : [];
  if (entries.length > 0 && !options.force) {
    throw new ConflictError(`${dataDir} is not empty; restore into an empty data dir, or pass --force to replace its database`);
  }
  const database = databasePath({ dataDir });
  if (fs.existsSync(database) && databaseInUse(database)) {
    throw new ConflictError(`the database in ${dataDir} is in use (a server or a command has it open); stop it first`);
  }
  ensurePrivateDir(dataDir);
  const temp = path.join(dataDir, `.restore.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    fs.copyFileSync(file, temp, fs.constants.COPYFILE_EXCL);
    fs.chmodSync(temp, PRIVATE_FILE_MODE);
    // A -wal or -shm left from the old database would be read as part of the new one.
    for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(`${database}${suffix}`, { force: true });
    fs.renameSync(temp, database);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  return { database, agents: describeCopy(database).agents };
}

/** Why backups are refused on PostgreSQL, and what to use there instead (the console and `cli backup`/`restore` say it). */
export const BACKUP_NEEDS_SQLITE =
  'backups copy the SQLite file, and this directory is on PostgreSQL: back it up with pg_dump ' +
  '(or `cli copy-data --to sqlite:<file>`), and restore with pg_restore or psql';

/** The console's side: back up into <data-dir>/backups/, and what the last backup (from anywhere) was. */
export interface BackupServiceDeps {
  /** The SQLite connection; undefined on PostgreSQL, where backups are refused (BACKUP_NEEDS_SQLITE). */
  db: { $client: Database.Database } | undefined;
  /** The audit entry is written in a transaction of this store (the same SQLite database). */
  store: Store;
  config: Pick<Config, 'dataDir'>;
  clock: Clock;
  audit: AuditService;
}

export function createBackupService({ db, store, config, clock, audit }: BackupServiceDeps) {
  const lastBackupFile = path.join(config.dataDir, LAST_BACKUP_FILE);

  async function backupTo(target: string): Promise<BackupSummary> {
    if (!db) throw new BackupFailedError(BACKUP_NEEDS_SQLITE);
    const summary = await backupDatabase(db.$client, target, clock);
    const temp = `${lastBackupFile}.${process.pid}.tmp`;
    ensurePrivateDir(config.dataDir); // the database may live elsewhere (--database sqlite:<path>)
    fs.writeFileSync(temp, `${JSON.stringify(summary, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
    fs.renameSync(temp, lastBackupFile);
    return summary;
  }

  return {
    /** Backs up to `target` and records it as the last backup. */
    backupTo,

    /** A backup into <data-dir>/backups/agent-directory-<UTC time>.sqlite, asked for by `actor` (audited). */
    async backupNow(actor: string): Promise<BackupSummary> {
      const folder = path.join(config.dataDir, BACKUPS_FOLDER);
      ensurePrivateDir(folder);
      const stamp = isoNow(clock)
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z');
      const summary = await backupTo(path.join(folder, `agent-directory-${stamp}.sqlite`));
      const entry = { actor, action: 'backup.create', entityType: 'backup', entityId: path.basename(summary.file), after: summary };
      await store.transaction(() => audit.recordInTransaction(entry));
      return summary;
    },

    /** The last backup recorded for this data dir, or null; `exists` says whether its file is still there. */
    last(): (BackupSummary & { exists: boolean }) | null {
      if (!db) return null; // none on PostgreSQL (a SQLite backup recorded in the data dir is not of this database)
      let summary: BackupSummary;
      try {
        summary = JSON.parse(fs.readFileSync(lastBackupFile, 'utf8')) as BackupSummary;
      } catch {
        return null;
      }
      return { ...summary, exists: fs.existsSync(summary.file) };
    },
  };
}

export type BackupService = ReturnType<typeof createBackupService>;
