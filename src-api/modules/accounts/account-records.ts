import { count, desc, eq, type SQL } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { insertionOrder } from '../../db/dialect-sql';
import { requireTransaction, type Store } from '../../db/store';
import type { Page, PageQuery } from '../../lib/schemas';
import { toAgentProfile } from '../agents/agent-profile';
import type { AgentProfile } from '../agents/agents.schemas';
import { toNewClaim } from '../claims/claim-views';
import type { NewClaim } from '../claims/claims.schemas';
import { toSubmission } from '../submissions/submissions.service';
import type { Submission } from '../submissions/submissions.schemas';

/**
 * What belongs to an account elsewhere in the directory: its owned agents, its
 * claims and submissions (for /me), and the detaching of all of it (reviews
 * too) when the account closes; the records stay, without an owner.
 */
export function createAccountRecords({ store }: { store: Store }) {
  const page = async <Row, T>(
    table: SQLiteTable & { id: SQLiteColumn },
    column: SQLiteColumn,
    created: SQLiteColumn,
    accountId: string,
    query: PageQuery,
    map: (row: Row) => T,
  ): Promise<Page<T>> => {
    const where: SQL = eq(column, accountId);
    const rows = (await store.rows(
      store.db
        .select()
        .from(table)
        .where(where)
        .orderBy(desc(created), desc(insertionOrder(store, table)))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit),
    )) as Row[];
    const total = (await store.first(store.db.select({ n: count() }).from(table).where(where)))?.n ?? 0;
    return { items: rows.map(map), page: query.page, limit: query.limit, total };
  };

  return {
    agents(accountId: string, query: PageQuery): Promise<Page<AgentProfile>> {
      const { agents } = store.t;
      return page(agents, agents.ownerAccountId, agents.createdAt, accountId, query, toAgentProfile);
    },

    /** The account's claims, with their proof instructions (the token is the account's own). */
    claims(accountId: string, query: PageQuery): Promise<Page<NewClaim>> {
      const { claims } = store.t;
      return page(claims, claims.accountId, claims.createdAt, accountId, query, toNewClaim);
    },

    submissions(accountId: string, query: PageQuery): Promise<Page<Submission>> {
      const { submissions } = store.t;
      return page(submissions, submissions.accountId, submissions.createdAt, accountId, query, toSubmission);
    },

    /**
     * Closing: the account's records stay, without an owner (its agents: AgentsService.detachOwner).
     * In the closing store transaction (an accounts.onClose hook).
     */
    async detach(accountId: string): Promise<void> {
      requireTransaction(store, 'accountRecords.detach');
      const { reviews, claims, submissions } = store.t;
      await store.run(store.db.update(reviews).set({ accountId: null }).where(eq(reviews.accountId, accountId)));
      await store.run(store.db.update(claims).set({ accountId: null }).where(eq(claims.accountId, accountId)));
      await store.run(store.db.update(submissions).set({ accountId: null }).where(eq(submissions.accountId, accountId)));
    },
  };
}

export type AccountRecords = ReturnType<typeof createAccountRecords>;
