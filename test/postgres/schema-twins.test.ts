import { getTableConfig as getPgTableConfig } from 'drizzle-orm/pg-core';
import { getTableConfig as getSqliteTableConfig } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import { pgTables, sqliteTables, tablePairs } from '../../src-api/db/table-pairs';

/**
 * The PostgreSQL schema (schema-pg.ts, `*.table.pg.ts` beside each domain's
 * table) is the SQLite one's twin: the same tables, columns, keys, defaults and
 * indexes, each column of a kind that stores the same values (contract section 8).
 */
type AnyColumn = { name: string; notNull: boolean; primary: boolean; isUnique: boolean; hasDefault: boolean; default: unknown };
type AnyIndex = { config: { name: string; unique: boolean; columns: unknown[] } };
type AnyKey = {
  onDelete?: string;
  onUpdate?: string;
  reference(): { columns: { name: string }[]; foreignColumns: { name: string }[]; foreignTable: unknown };
};

function shape(config: { columns: AnyColumn[]; indexes: AnyIndex[]; foreignKeys: AnyKey[] }, tableName: (table: never) => string) {
  return {
    columns: config.columns.map((column) => ({
      name: column.name,
      notNull: column.notNull,
      primary: column.primary,
      unique: column.isUnique,
      default: column.hasDefault ? JSON.stringify(column.default) : null,
    })),
    indexes: config.indexes
      .map((index) => ({
        name: index.config.name,
        unique: index.config.unique,
        columns: index.config.columns.map((column) => (column as { name: string }).name),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    foreignKeys: config.foreignKeys
      .map((key) => {
        const reference = key.reference();
        return {
          columns: reference.columns.map((column) => column.name),
          table: tableName(reference.foreignTable as never),
          foreignColumns: reference.foreignColumns.map((column) => column.name),
          onDelete: key.onDelete ?? 'no action',
        };
      })
      .sort((a, b) => a.columns.join().localeCompare(b.columns.join())),
  };
}

describe('the PostgreSQL schema is the SQLite schema’s twin', () => {
  it('the same tables on both sides, every column paired with one of the same kind', () => {
    const names = (tables: { name: string }[]) => tables.map((table) => table.name).sort();
    expect(names(pgTables().map((table) => getPgTableConfig(table)))).toEqual(
      names(sqliteTables().map((table) => getSqliteTableConfig(table))),
    );
    const pairs = tablePairs();
    expect(pairs.length).toBe(sqliteTables().length);
    expect(pairs.flatMap((pair) => pair.columns.map((column) => column.kind)).sort()).toContain('boolean');
  });

  it('parents come before the tables that point to them', () => {
    const order = tablePairs().map((pair) => pair.name);
    for (const pair of tablePairs())
      for (const parent of pair.parents) expect(order.indexOf(parent)).toBeLessThan(order.indexOf(pair.name));
    expect(order.indexOf('agents')).toBeLessThan(order.indexOf('reviews'));
    expect(order.indexOf('reviews')).toBeLessThan(order.indexOf('review_replies'));
  });

  for (const pair of tablePairs()) {
    it(`${pair.name}: same columns, nullability, keys, defaults, indexes and foreign keys`, () => {
      const sqlite = shape(getSqliteTableConfig(pair.sqlite) as never, (table) => getSqliteTableConfig(table).name);
      const pg = shape(getPgTableConfig(pair.pg) as never, (table) => getPgTableConfig(table).name);
      expect(pg).toEqual(sqlite);
    });
  }
});
