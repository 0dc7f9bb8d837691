import type { Command } from 'commander';
import { parseDatabaseUrl } from '../config';
import { argParser, formatCount, plural } from './context';

interface CopyDataFlags {
  from: string;
  to: string;
}

/** `copy-data --from URL --to URL`: the whole directory from one store to another (contract section 8). */
export function registerCopyDataCommand(program: Command): void {
  program
    .command('copy-data')
    .description('Copy the whole directory from one database to another, SQLite to PostgreSQL or back (the target must be empty)')
    .requiredOption(
      '--from <url>',
      'the database to copy: sqlite:<path> or postgres://user:password@host:port/database',
      argParser((value) => parseDatabaseUrl(value, '--from')),
    )
    .requiredOption(
      '--to <url>',
      'an empty database to fill (migrated first; created when a sqlite: file does not exist)',
      argParser((value) => parseDatabaseUrl(value, '--to')),
    )
    .addHelpText(
      'after',
      '\nEvery table is copied with its ids, in one transaction on each side: the target gets all of it or nothing.\n' +
        'The source is read from one snapshot, so a server may keep running on it.\n\n' +
        'Example:\n  npm run cli -- copy-data --from sqlite:./data/agent-directory.sqlite --to postgres://agentdir@localhost/agentdir',
    )
    .action(async (flags: CopyDataFlags) => {
      // Loaded on use: the other commands never load the PostgreSQL driver.
      const { copyData } = await import('./copy-data');
      const { describeStore } = await import('./copy-data-stores');
      const summary = await copyData(flags.from, flags.to, ({ table, rows }) => console.log(`${table}: ${plural(rows, 'row')}`));
      const seconds = (summary.ms / 1000).toFixed(1);
      console.log(
        `Copied ${plural(summary.rows, 'row')} in ${formatCount(summary.tables.length)} tables from ${describeStore(flags.from)} to ${describeStore(flags.to)} (${seconds} s)`,
      );
    });
}
