import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { configFromEnv, createConfig, databaseTarget, parseDatabaseUrl, type Config } from '../config';
import { PostgresConnectError } from '../db/postgres-error';
import { openStore, type OpenedStore } from '../db/open-store';
import { createServices, type Services } from '../services';

/**
 * What every CLI command shares: the `--data-dir` flag, the Config built from
 * it (once, flags over environment over defaults), the services over the data
 * dir's database, and the one error type for "this failed, say why, exit 1".
 */

/** A failure the user can act on: printed as `error: <message>`, exit code 1, no stack trace. */
export class CliError extends Error {
  override name = 'CliError';
}

export interface DataDirFlags {
  dataDir?: string;
  database?: string;
}

/** The flags that say where the directory is: --data-dir and --database (every command takes both). */
export function addDataDirOption(command: Command): Command {
  return command.option('--data-dir <dir>', 'folder of the SQLite database (default ./data, env AGENTDIR_DATA_DIR)').option(
    '--database <url>',
    "the database: sqlite:<path> (default: the data dir's file) or postgres://… (env AGENTDIR_DATABASE_URL)",
    argParser((value) => parseDatabaseUrl(value, '--database')),
  );
}

export function cliConfig(flags: DataDirFlags): Config {
  return createConfig({
    ...configFromEnv(process.env),
    ...(flags.dataDir !== undefined && { dataDir: path.resolve(flags.dataDir) }),
    ...(flags.database !== undefined && { databaseUrl: flags.database }),
  });
}

/**
 * Opens (creating and migrating when missing) the database of the data dir or of --database (SQLite
 * or PostgreSQL), runs `work` with the services, and closes the database however `work` ends.
 */
export async function withServices<T>(flags: DataDirFlags, work: (services: Services) => T | Promise<T>): Promise<T> {
  return withConfigServices(cliConfig(flags), work);
}

/** withServices with a Config of the caller's (`cli webhooks` adds --allow-private-urls). */
export async function withConfigServices<T>(config: Config, work: (services: Services) => T | Promise<T>): Promise<T> {
  const database = await openCliStore(config);
  try {
    return await work(createServices({ store: database.store, config }));
  } finally {
    await database.close();
  }
}

/** The database of `config`, opened; what keeps it from opening is a CliError of one line. */
async function openCliStore(config: Config): Promise<OpenedStore> {
  try {
    return await openStore(config);
  } catch (error) {
    // PostgreSQL: unreachable, a wrong password, no such database (said with the URL, without its password).
    if (error instanceof PostgresConnectError) throw new CliError(error.message);
    if (databaseTarget(config).dialect === 'postgres') throw new CliError(`cannot open the PostgreSQL database: ${(error as Error).message}`);
    // SQLite: a folder that cannot be created, a file that is not a database, …: the user's to fix.
    const reason = (error as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new CliError(`cannot open the database in ${config.dataDir}: ${reason}`);
  }
}

/** Turns a parse error of a flag value into commander's usage error (exit code 2). */
export function argParser<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (error) {
      throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
    }
  };
}

/** "1,234" */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A file system error as one line a user understands. */
export function fileErrorMessage(error: unknown, file: string, verb: 'read' | 'write'): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason =
    code === 'ENOENT'
      ? verb === 'read'
        ? 'no such file'
        : 'the folder does not exist'
      : code === 'EISDIR'
        ? 'it is a directory'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'ENOSPC'
            ? 'no space left on the device'
            : error instanceof Error
              ? error.message
              : String(error);
  return `cannot ${verb} ${file}: ${reason}`;
}
