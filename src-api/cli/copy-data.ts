import { PostgresConnectError } from '../db/postgres-error';
import { tablePairs } from '../db/table-pairs';
import {
  describeStore,
  postgresSource,
  postgresTarget,
  sqliteSource,
  sqliteTarget,
  type CopySource,
  type CopyTarget,
} from './copy-data-stores';
import { CliError } from './context';

/**
 * `cli copy-data --from URL --to URL` (contract section 8): the whole directory
 * from one store to another, SQLite and PostgreSQL either way. The target must
 * be empty (checked before anything is written); it is migrated, then every
 * table is copied in one write transaction, parents first, in batches, ids as
 * they are; the source is read in one transaction (one snapshot), so a server
 * may keep writing to it.
 */

/** Rows per read and per INSERT: 1,000 rows of the widest table stay far below PostgreSQL's 65,535 parameters. */
export const COPY_BATCH = 1_000;

export interface TableCopied {
  table: string;
  rows: number;
}

export interface CopySummary {
  tables: TableCopied[];
  rows: number;
  ms: number;
}

export async function copyData(from: string, to: string, onTable: (copied: TableCopied) => void = () => {}): Promise<CopySummary> {
  if (from === to) throw new CliError('--from and --to are the same database');
  const started = performance.now();
  const pairs = tablePairs();
  const target = openTarget(to);
  let source: CopySource | undefined;
  try {
    const refuse = async () => {
      const filled = await step(`read the target ${describeStore(to)}`, () => target.nonEmptyTables(pairs));
      if (filled.length > 0) {
        const which = filled.length <= 3 ? filled.join(', ') : `${filled.slice(0, 3).join(', ')} and ${filled.length - 3} more`;
        throw new CliError(
          `the target ${describeStore(to)} is not empty (${which} ${filled.length === 1 ? 'has' : 'have'} rows): copy-data only fills an empty database`,
        );
      }
    };
    await refuse();
    source = await step(`open the source ${describeStore(from)}`, () => openSource(from));
    await step(`prepare the target ${describeStore(to)}`, () => target.begin());
    // Checked again under the write transaction: a process may have written between the first look and now.
    await refuse();
    const tables: TableCopied[] = [];
    for (const pair of pairs) {
      let rows = 0;
      await step(`copy ${pair.name}`, async () => {
        for await (const batch of source!.read(pair, COPY_BATCH)) {
          await target.insert(pair, batch);
          rows += batch.length;
        }
      });
      tables.push({ table: pair.name, rows });
      onTable({ table: pair.name, rows });
    }
    await step(`commit to the target ${describeStore(to)}`, () => target.commit());
    return { tables, rows: tables.reduce((sum, table) => sum + table.rows, 0), ms: performance.now() - started };
  } catch (error) {
    await target.rollback();
    throw error;
  } finally {
    await source?.close().catch(() => {});
    await target.close().catch(() => {});
  }
}

function openSource(url: string): CopySource | Promise<CopySource> {
  return url.startsWith('sqlite:') ? sqliteSource(url) : postgresSource(url);
}

function openTarget(url: string): CopyTarget {
  return url.startsWith('sqlite:') ? sqliteTarget(url) : postgresTarget(url);
}

/** Runs one step; a failure the user can act on keeps its message, any other says which step failed and why. */
async function step<T>(what: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CliError) throw error;
    if (error instanceof PostgresConnectError) throw new CliError(error.message);
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'EACCES' ? 'permission denied' : error instanceof Error ? error.message : String(error);
    throw new CliError(`cannot ${what}: ${reason}`);
  }
}
