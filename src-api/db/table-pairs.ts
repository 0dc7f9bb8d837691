import { is } from 'drizzle-orm';
import { getTableConfig as getPgTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { getTableConfig as getSqliteTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { BYTE_ORDER_TEXT_TYPE } from './pg-columns';
import * as sqliteSchema from './schema';
import * as pgSchema from './schema-pg';

/**
 * Each table of the SQLite schema with its PostgreSQL twin (schema-pg.ts):
 * the same table and column names, and for each column how its values are
 * stored on each side. `cli copy-data` copies through these; a unit test
 * checks that the two schemas stay twins.
 */

/** How a column's values are stored: SQLite's storage beside PostgreSQL's type. */
export type ColumnKind =
  /** TEXT · text */
  | 'text'
  /** JSON text · json (kept verbatim: same bytes both ways) */
  | 'json'
  /** INTEGER 0/1 · boolean */
  | 'boolean'
  /** INTEGER (64-bit) · bigint */
  | 'integer'
  /** REAL · double precision */
  | 'real';

export interface ColumnPair {
  name: string;
  kind: ColumnKind;
}

export interface TablePair {
  name: string;
  sqlite: SQLiteTable;
  pg: PgTable;
  columns: ColumnPair[];
  /** The columns that order a full read: the primary key, else every column of the first unique index. */
  orderBy: string[];
  /** The tables this one's foreign keys point to. */
  parents: string[];
}

const SQLITE_KINDS: Record<string, ColumnKind> = {
  SQLiteText: 'text',
  SQLiteTextJson: 'json',
  SQLiteBoolean: 'boolean',
  SQLiteInteger: 'integer',
  SQLiteReal: 'real',
};
const PG_KINDS: Record<string, ColumnKind> = {
  PgText: 'text',
  PgJson: 'json',
  PgBoolean: 'boolean',
  PgBigInt53: 'integer',
  PgDoublePrecision: 'real',
};

/** A PostgreSQL column's kind; custom columns by their SQL type (pg-columns.ts: text in byte order is text). */
function pgKind(column: { columnType: string; getSQLType(): string }): ColumnKind | undefined {
  if (column.columnType === 'PgCustomColumn') return column.getSQLType() === BYTE_ORDER_TEXT_TYPE ? 'text' : undefined;
  return PG_KINDS[column.columnType];
}

export function sqliteTables(): SQLiteTable[] {
  return (Object.values(sqliteSchema) as unknown[]).filter((value): value is SQLiteTable => is(value, SQLiteTable));
}

export function pgTables(): PgTable[] {
  return (Object.values(pgSchema) as unknown[]).filter((value): value is PgTable => is(value, PgTable));
}

let pairs: TablePair[] | undefined;

/** Every table pair, parents before the tables whose foreign keys point to them. */
export function tablePairs(): TablePair[] {
  if (pairs) return pairs;
  const pgByName = new Map(pgTables().map((table) => [getPgTableConfig(table).name, table]));
  const unordered = sqliteTables().map((sqlite): TablePair => {
    const config = getSqliteTableConfig(sqlite);
    const pg = pgByName.get(config.name);
    if (!pg) throw new Error(`table ${config.name} has no PostgreSQL twin in schema-pg.ts`);
    const pgColumns = new Map(getPgTableConfig(pg).columns.map((column) => [column.name, column]));
    const columns = config.columns.map((column): ColumnPair => {
      const kind = SQLITE_KINDS[column.columnType];
      const twin = pgColumns.get(column.name);
      if (!kind || !twin || pgKind(twin) !== kind) {
        throw new Error(`column ${config.name}.${column.name} (${column.columnType}) has no PostgreSQL twin of the same kind`);
      }
      return { name: column.name, kind };
    });
    if (pgColumns.size !== columns.length) throw new Error(`table ${config.name} has other columns in PostgreSQL than in SQLite`);
    const primary = config.columns.filter((column) => column.primary).map((column) => column.name);
    const unique = config.indexes.find((index) => index.config.unique)?.config.columns.map((column) => (column as { name: string }).name);
    const orderBy = primary.length > 0 ? primary : (unique ?? columns.map((column) => column.name));
    const parents = config.foreignKeys
      .map((key) => getSqliteTableConfig(key.reference().foreignTable).name)
      .filter((parent) => parent !== config.name);
    return { name: config.name, sqlite, pg, columns, orderBy, parents };
  });
  if (pgByName.size !== unordered.length) throw new Error('schema-pg.ts has tables that schema.ts does not have');
  // Parents first (a depth-first walk; the schema has no cycles).
  const byName = new Map(unordered.map((pair) => [pair.name, pair]));
  const ordered: TablePair[] = [];
  const placed = new Set<string>();
  const place = (pair: TablePair) => {
    if (placed.has(pair.name)) return;
    placed.add(pair.name);
    for (const parent of pair.parents) place(byName.get(parent)!);
    ordered.push(pair);
  };
  for (const pair of unordered) place(pair);
  return (pairs = ordered);
}
