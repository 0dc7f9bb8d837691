import { and, asc, desc, eq, getTableColumns, gt, inArray, sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { byteOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { INDEX_KEYS, type AgentRowReads, type ListedPageQuery } from './agent-rows';
import { ratingSortSql } from './trust-score';

/**
 * The agent row reads of agent-rows.ts on PostgreSQL, through drizzle (values
 * mapped by the same columns, so the rows equal SQLite's). Text is compared
 * and sorted with COLLATE "C" where SQLite's byte order shows: keyset paging
 * by id (`id > after`) and the name sort.
 */
export function pgAgentRowReads(store: Store): AgentRowReads {
  const { agents } = store.t;
  const all = getTableColumns(agents);
  const indexColumns = Object.fromEntries(INDEX_KEYS.map((key) => [key, all[key]])) as Pick<typeof all, (typeof INDEX_KEYS)[number]>;
  const idAfter = (afterId: string) => sql`${byteOrder(store, agents.id)} > ${afterId}`;
  const sortColumn = (orderBy: ListedPageQuery['orderBy'], direction: ListedPageQuery['direction']): SQL | AnySQLiteColumn => {
    if (orderBy === 'name') return byteOrder(store, agents.name);
    if (orderBy === 'rating') return sql.raw(ratingSortSql('postgres', direction));
    return { trust_score: agents.trustScore, created_at: agents.createdAt, updated_at: agents.updatedAt }[orderBy];
  };

  return {
    async latestChangeSeq() {
      const seq = sql<number>`coalesce(max(${agents.changeSeq}), -1)`.mapWith(Number);
      return (await store.first(store.db.select({ seq }).from(agents)))!.seq;
    },
    changedSince: (afterSeq, limit) =>
      store.rows(store.db.select(indexColumns).from(agents).where(gt(agents.changeSeq, afterSeq)).orderBy(asc(agents.changeSeq)).limit(limit)),
    feedSince: (afterSeq, limit) =>
      store.rows(
        store.db
          .select({ id: agents.id, listed: agents.listed, version: agents.version, changeSeq: agents.changeSeq })
          .from(agents)
          .where(gt(agents.changeSeq, afterSeq))
          .orderBy(asc(agents.changeSeq))
          .limit(limit),
      ),
    async idsChangedSince(afterSeq, limit) {
      const rows = await store.rows(store.db.select({ id: agents.id }).from(agents).where(gt(agents.changeSeq, afterSeq)).limit(limit));
      return rows.map((row) => row.id);
    },
    byIds: async (ids) => (ids.length === 0 ? [] : store.rows(store.db.select().from(agents).where(inArray(agents.id, [...ids])))),
    byId: (id) => store.first(store.db.select().from(agents).where(eq(agents.id, id)).limit(1)),
    async listedPageIds({ orderBy, direction, type, limit, offset }) {
      const dir = direction === 'asc' ? asc : desc;
      const order = [dir(sortColumn(orderBy, direction)), dir(byteOrder(store, agents.id))];
      const listed = type ? and(eq(agents.listed, true), eq(agents.type, type)) : eq(agents.listed, true);
      const rows = await store.rows(
        store.db
          .select({ id: agents.id })
          .from(agents)
          .where(listed)
          .orderBy(...order)
          .limit(limit)
          .offset(offset),
      );
      return rows.map((row) => row.id);
    },
    listedAfter: (afterId, limit) =>
      store.rows(
        store.db
          .select()
          .from(agents)
          .where(and(idAfter(afterId), eq(agents.listed, true)))
          .orderBy(asc(byteOrder(store, agents.id)))
          .limit(limit),
      ),
  };
}
