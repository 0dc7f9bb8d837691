import fs from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openDatabase } from '../db/client';
import { connectPostgres, describePostgresUrl, migratePostgres } from '../db/client-pg';
import { BULK_WRITE_ROWS } from '../db/bulk-write';
import type { ColumnKind, TablePair } from '../db/table-pairs';
import { CliError } from './context';

/**
 * The two ends of `cli copy-data`, one per store. Rows travel between them as
 * arrays of plain values, one per column of the table pair, the same for both
 * stores: text and JSON text as strings (JSON kept verbatim), 0/1 flags as
 * booleans, integers as bigint (exact to 64 bits), reals as numbers, null as null.
 */
export type Value = string | boolean | bigint | number | null;
export type Row = Value[];

export interface CopySource {
  /** Reads every row of a table in the order of its key, `batch` rows at a time, all tables from one snapshot. */
  read(pair: TablePair, batch: number): AsyncIterable<Row[]>;
  close(): Promise<void>;
}

export interface CopyTarget {
  /** Tables of the schema that hold rows (only those that exist), checked before anything is written. */
  nonEmptyTables(pairs: TablePair[]): Promise<string[]>;
  /** Brings the schema up to date, then opens the one write transaction. */
  begin(): Promise<void>;
  insert(pair: TablePair, rows: Row[]): Promise<void>;
  /** Sets each sequence past the largest value copied, then commits. */
  commit(): Promise<void>;
  rollback(): Promise<void>;
  close(): Promise<void>;
}

/** `sqlite:<path>` or `postgres://…` as the user reads it: the path, or the server without the password. */
export function describeStore(url: string): string {
  return url.startsWith('sqlite:') ? url : `postgres://${describePostgresUrl(url)}`;
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const columnList = (pair: TablePair): string => pair.columns.map((column) => quote(column.name)).join(', ');
const orderList = (pair: TablePair): string => pair.orderBy.map(quote).join(', ');

/** A value as SQLite stores it, in the common form; a value that does not fit its kind is an error. */
function fromSqlite(kind: ColumnKind, value: unknown, where: () => string): Value {
  if (value === null) return null;
  switch (kind) {
    case 'boolean':
      if (value === 0n || value === 1n) return value === 1n;
      break;
    case 'integer':
      if (typeof value === 'bigint') return value;
      if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
      break;
    case 'real':
      if (typeof value === 'number') return value;
      if (typeof value === 'bigint') return Number(value);
      break;
    default:
      if (typeof value === 'string') return value;
  }
  throw new CliError(`cannot copy ${where()}: ${typeof value} ${String(value)} is not a valid ${kind} value`);
}

const toSqlite = (value: Value): string | number | bigint | null => (typeof value === 'boolean' ? (value ? 1 : 0) : value);

/** A value as node-postgres binds it: bigint as its decimal text, exact. */
const toPostgres = (value: Value): string | number | boolean | null => (typeof value === 'bigint' ? value.toString() : value);

// ---------------------------------------------------------------- SQLite

function sqliteFile(url: string): string {
  return url.slice('sqlite:'.length);
}

/** Opens the source file (it must exist: copying from nothing is a mistake) and brings it up to date, as every command does. */
export function sqliteSource(url: string): CopySource {
  const file = sqliteFile(url);
  if (!fs.existsSync(file)) throw new CliError(`the source ${url} does not exist`);
  const db = openDatabase(file).$client;
  // One read transaction for every table: WAL gives this connection one snapshot while others write.
  db.exec('BEGIN');
  return {
    async *read(pair, batch) {
      const statement = db.prepare(`SELECT ${columnList(pair)} FROM ${quote(pair.name)} ORDER BY ${orderList(pair)}`);
      let rows: Row[] = [];
      for (const raw of statement.safeIntegers(true).raw(true).iterate() as Iterable<unknown[]>) {
        rows.push(pair.columns.map((column, i) => fromSqlite(column.kind, raw[i], () => `${pair.name}.${column.name}`)));
        if (rows.length === batch) {
          yield rows;
          rows = [];
        }
      }
      if (rows.length > 0) yield rows;
    },
    async close() {
      if (db.inTransaction) db.exec('COMMIT');
      db.close();
    },
  };
}

export function sqliteTarget(url: string): CopyTarget {
  const file = sqliteFile(url);
  let db: Database.Database | undefined;
  const statements = new Map<string, Database.Statement>();
  return {
    async nonEmptyTables(pairs) {
      if (!fs.existsSync(file)) return [];
      const check = new Database(file, { readonly: true, fileMustExist: true });
      try {
        return nonEmpty(pairs, (name) => {
          const exists = check.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
          return exists && check.prepare(`SELECT 1 FROM ${quote(name)} LIMIT 1`).get() !== undefined;
        });
      } finally {
        check.close();
      }
    },
    async begin() {
      db = openDatabase(file).$client;
      db.exec('BEGIN IMMEDIATE');
    },
    async insert(pair, rows) {
      let statement = statements.get(pair.name);
      if (!statement) {
        const placeholders = pair.columns.map(() => '?').join(', ');
        statement = db!.prepare(`INSERT INTO ${quote(pair.name)} (${columnList(pair)}) VALUES (${placeholders})`);
        statements.set(pair.name, statement);
      }
      for (const row of rows) statement.run(row.map(toSqlite));
    },
    // No table of the schema has an AUTOINCREMENT key: the ids are copied as they are, nothing else to move.
    async commit() {
      db!.exec('COMMIT');
    },
    async rollback() {
      if (db?.inTransaction) db.exec('ROLLBACK');
    },
    async close() {
      db?.close();
    },
  };
}

// ---------------------------------------------------------------- PostgreSQL

/** bigint (int8) as a JS bigint and json as its text, untouched; every other type as node-postgres parses it. */
const COPY_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === pg.types.builtins.INT8) return (text: string) => BigInt(text);
    if (oid === pg.types.builtins.JSON) return (text: string) => text;
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

async function connectForCopy(url: string): Promise<pg.Client> {
  await migratePostgres(url);
  return connectPostgres(url, { types: COPY_TYPES });
}

export async function postgresSource(url: string): Promise<CopySource> {
  const client = await connectForCopy(url);
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  return {
    async *read(pair, batch) {
      await client.query(
        `DECLARE copy_rows NO SCROLL CURSOR FOR SELECT ${columnList(pair)} FROM ${quote(pair.name)} ORDER BY ${orderList(pair)}`,
      );
      for (;;) {
        const { rows } = await client.query<unknown[]>({ text: `FETCH FORWARD ${batch} FROM copy_rows`, rowMode: 'array' });
        if (rows.length === 0) break;
        yield rows as Row[];
      }
      await client.query('CLOSE copy_rows');
    },
    async close() {
      await client.query('COMMIT').catch(() => {});
      await client.end();
    },
  };
}

export function postgresTarget(url: string): CopyTarget {
  let client: pg.Client | undefined;
  const copied = new Set<string>();
  const rowsOf = new Map<string, number>();
  return {
    async nonEmptyTables(pairs) {
      const check = await connectPostgres(url);
      try {
        const { rows } = await check.query<{ name: string }>(
          "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename = ANY($1)",
          [pairs.map((pair) => pair.name)],
        );
        const existing = new Set(rows.map((row) => row.name));
        const found: string[] = [];
        for (const name of pairs.map((pair) => pair.name)) {
          if (existing.has(name) && (await check.query(`SELECT 1 FROM ${quote(name)} LIMIT 1`)).rowCount) found.push(name);
        }
        return found;
      } finally {
        await check.end();
      }
    },
    async begin() {
      client = await connectForCopy(url);
      await client.query('BEGIN');
    },
    async insert(pair, rows) {
      copied.add(pair.name);
      rowsOf.set(pair.name, (rowsOf.get(pair.name) ?? 0) + rows.length);
      const width = pair.columns.length;
      const values = rows.map((_, r) => `(${pair.columns.map((__, c) => `$${r * width + c + 1}`).join(', ')})`).join(', ');
      await client!.query(`INSERT INTO ${quote(pair.name)} (${columnList(pair)}) VALUES ${values}`, rows.flat().map(toPostgres));
    },
    async commit() {
      // Serial and identity columns (none in the schema today): each sequence moves past the largest copied value.
      const { rows } = await client!.query<{ table: string; column: string; sequence: string }>(
        `SELECT c.table_name AS table, c.column_name AS column, pg_get_serial_sequence(quote_ident(c.table_name), c.column_name) AS sequence
           FROM information_schema.columns c
          WHERE c.table_schema = 'public' AND c.table_name = ANY($1)
            AND pg_get_serial_sequence(quote_ident(c.table_name), c.column_name) IS NOT NULL`,
        [[...copied]],
      );
      for (const { table, column, sequence } of rows) {
        await client!.query(
          `SELECT setval($1, coalesce((SELECT max(${quote(column)}) FROM ${quote(table)}), 1), (SELECT count(*) > 0 FROM ${quote(table)}))`,
          [sequence],
        );
      }
      // The agents' change cursor (a sequence of its own, not a column's): past the copied change_seqs, as
      // agent-writes draws from it without looking at the rows.
      if (copied.has('agents'))
        await client!.query(`SELECT setval('agents_change_seq', m) FROM (SELECT max(change_seq) AS m FROM agents) t WHERE m > 0`);
      await client!.query('COMMIT');
      // Ready for reads at once rather than when autovacuum comes round (db/bulk-write.ts says why); the copy has committed.
      for (const [table, rows] of rowsOf) {
        if (rows >= BULK_WRITE_ROWS) await client!.query(`VACUUM (ANALYZE) ${quote(table)}`).catch(() => {});
      }
    },
    async rollback() {
      await client?.query('ROLLBACK').catch(() => {});
    },
    async close() {
      await client?.end();
    },
  };
}

function nonEmpty(pairs: TablePair[], hasRows: (name: string) => boolean): string[] {
  return pairs.map((pair) => pair.name).filter(hasRows);
}
