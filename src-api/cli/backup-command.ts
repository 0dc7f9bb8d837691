import fs from 'node:fs';
import type { Command } from 'commander';
import { databasePath, databaseTarget } from '../config';
import { openDatabase } from '../db/client';
import { BACKUP_NEEDS_SQLITE, restoreBackup } from '../modules/backup/backup.service';
import { addDataDirOption, CliError, cliConfig, formatCount, withServices, type DataDirFlags } from './context';

interface RestoreFlags extends DataDirFlags {
  force?: boolean;
}

const megabytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** `backup FILE`: a consistent copy while a server writes; `restore FILE`: puts one in place in a data dir. */
export function registerBackupCommand(program: Command): void {
  addDataDirOption(
    program
      .command('backup')
      .description("Write a consistent copy of the data dir's database to FILE (SQLite's online backup; safe while a server writes)")
      .argument('<file>', 'the backup file to write (replaced atomically; mode 0600)'),
  ).action(async (file: string, flags: DataDirFlags) => {
    const config = cliConfig(flags);
    if (databaseTarget(config).dialect === 'postgres') throw new CliError(BACKUP_NEEDS_SQLITE);
    // Backing up a data dir that has no database would create an empty one: say so instead.
    if (!fs.existsSync(databasePath(config))) throw new CliError(`there is no database in ${config.dataDir}`);
    const summary = await withServices(flags, (services) => services.backups.backupTo(file));
    console.log(
      `Backed up ${formatCount(summary.agents)} agents (change cursor ${summary.change_cursor}, ${megabytes(summary.bytes)}) to ${file} at ${summary.taken_at}`,
    );
  });

  addDataDirOption(
    program
      .command('restore')
      .description('Restore a backup FILE as the database of an empty data dir (a non-empty one only with --force)')
      .argument('<file>', 'a backup written by "backup" (or by the console)')
      .option('--force', 'replace the database of a data dir that is not empty (never while a server uses it)'),
  ).action((file: string, flags: RestoreFlags) => {
    const config = cliConfig(flags);
    if (databaseTarget(config).dialect === 'postgres') throw new CliError(BACKUP_NEEDS_SQLITE);
    // A restore replaces the data dir's own file; another database (--database) is not restored into.
    if (config.databaseUrl !== undefined) {
      throw new CliError('restore replaces the database of --data-dir; leave --database (and AGENTDIR_DATABASE_URL) out');
    }
    const { agents } = restoreBackup(file, config.dataDir, { force: flags.force === true });
    // Opening it brings a copy made by an older version up to date.
    openDatabase(databasePath(config)).$client.close();
    console.log(`Restored ${formatCount(agents)} agents from ${file} into ${config.dataDir}`);
  });
}
