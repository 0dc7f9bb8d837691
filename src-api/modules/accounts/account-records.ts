import { count, desc, eq, type SQL } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../db/client';
import type { Page, PageQuery } from '../../lib/schemas';
import { toAgentProfile } from '../agents/agent-profile';
import type { AgentProfile } from '../agents/agents.schemas';
import { agents } from '../agents/agents.table';
import { toNewClaim } from '../claims/claim-views';
import { claims } from '../claims/claims.table';
import type { NewClaim } from '../claims/claims.schemas';
import { reviews } from '../reviews/reviews.table';
import { toSubmission } from '../submissions/submissions.service';
import type { Submission } from '../submissions/submissions.schemas';
import { submissions } from '../submissions/submissions.table';

/**
 * What belongs to an account elsewhere in the directory: its owned agents, its
 * claims and submissions (for /me), and the detaching of all of it (reviews
 * too) when the account closes; the records stay, without an owner.
 */
export function createAccountRecords({ db }: { db: Db }) {
  const page = <Row, T>(
    table: SQLiteTable,
    column: SQLiteColumn,
    created: SQLiteColumn,
    accountId: string,
    query: PageQuery,
    map: (row: Row) => T,
  ): Page<T> => {
    const where: SQL = eq(column, accountId);
    const rows = db
      .select()
      .from(table)
      .where(where)
      .orderBy(desc(created))
      .limit(query.limit)
      .offset((query.page - 1) * query.limit)
      .all() as Row[];
    const total = db.select({ n: count() }).from(table).where(where).get()?.n ?? 0;
    return { items: rows.map(map), page: query.page, limit: query.limit, total };
  };

  return {
    agents(accountId: string, query: PageQuery): Page<AgentProfile> {
      return page(agents, agents.ownerAccountId, agents.createdAt, accountId, query, toAgentProfile);
    },

    /** The account's claims, with their proof instructions (the token is the account's own). */
    claims(accountId: string, query: PageQuery): Page<NewClaim> {
      return page(claims, claims.accountId, claims.createdAt, accountId, query, toNewClaim);
    },

    submissions(accountId: string, query: PageQuery): Page<Submission> {
      return page(submissions, submissions.accountId, submissions.createdAt, accountId, query, toSubmission);
    },

    /** Closing: the account's records stay, without an owner (its agents: AgentsService.detachOwner). Call inside the closing transaction. */
    detach(accountId: string): void {
      db.update(reviews).set({ accountId: null }).where(eq(reviews.accountId, accountId)).run();
      db.update(claims).set({ accountId: null }).where(eq(claims.accountId, accountId)).run();
      db.update(submissions).set({ accountId: null }).where(eq(submissions.accountId, accountId)).run();
    },
  };
}

export type AccountRecords = ReturnType<typeof createAccountRecords>;
