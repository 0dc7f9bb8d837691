import { and, asc, eq, ne, sql } from 'drizzle-orm';
import { byteOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { sqliteDbOf } from '../../db/store-sqlite';
import type { Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { sourceUrlKey } from '../../lib/urls';
import type { AuditService } from '../audit/audit.service';
import { createAgentEdits } from './agent-edits';
import { createAgentReads } from './agent-reads';
import type { AgentWrites } from './agent-writes';
import type { AgentRow, AgentSkill } from './agents.table';
import { createTrustRefresh } from './trust-refresh';

export interface AgentsServiceDeps {
  /** The data-access seam every agent read and write runs on. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  audit: AuditService;
  /** The one write path of agents (rules, change cursor, events). */
  writes: AgentWrites;
  /**
   * Serialized public profiles kept in memory (`config.profileCacheEntries`): a
   * directory that fits is read without touching SQLite once warm.
   */
  profileCacheEntries: number;
}

/** What an agent submitted by Agent Card keeps of it. */
export interface AgentCardFields {
  url: string;
  skills: AgentSkill[];
  etag: string | null;
}

export function createAgentsService({ store, clock, ids, audit, writes, profileCacheEntries }: AgentsServiceDeps) {
  const reads = createAgentReads({ store, profileCacheEntries });
  const trustRefresh = createTrustRefresh({ db: sqliteDbOf(store), store, clock, writes });
  const { sync, ...asyncReads } = reads;
  const service = {
    /**
     * The ported reads (async, either store): get, getJson, getRow, list, listJson, listForConsole, bulkJson, changesJson,
     * … and searchSync, SQLite's synchronous reads for search (see agent-reads).
     */
    ...asyncReads,

    /** A listed agent whose source is the same as `url` (other than the agent `except`), if any. */
    findBySourceUrl(url: string, except?: string): Promise<AgentRow | undefined> {
      const { agents } = store.t;
      const same = and(eq(agents.sourceUrlKey, sourceUrlKey(url)), eq(agents.listed, true), except === undefined ? undefined : ne(agents.id, except));
      return store.first(store.db.select().from(agents).where(same).limit(1));
    },

    /**
     * The agent writes, async on either store, in the caller's store transaction (a savepoint) or one
     * of their own: create, update, setVerified, setStatus, setListed (the console's tRPC procedures),
     * renameOwner, detachOwner. See agent-edits.ts.
     */
    edits: createAgentEdits({ store, writes, audit, clock, ids, rowByIdSync: sync.statements?.byId }),

    /** Agents whose Agent Card was last fetched before `before` (oldest first): the weekly re-fetch. */
    agentCardsDue(before: string, limit: number): Promise<Pick<AgentRow, 'id' | 'agentCardUrl' | 'agentCardEtag'>[]> {
      const { agents } = store.t;
      return store.rows(
        store.db
          .select({ id: agents.id, agentCardUrl: agents.agentCardUrl, agentCardEtag: agents.agentCardEtag })
          .from(agents)
          .where(and(sql`${agents.agentCardUrl} IS NOT NULL`, sql`coalesce(${agents.agentCardFetchedAt}, '') < ${before}`))
          .orderBy(asc(byteOrder(store, agents.agentCardFetchedAt)))
          .limit(limit),
      );
    },

    /** The trust score's age signal moves daily: refreshTrustScores (and a slice of it), see trust-refresh.ts. */
    ...trustRefresh,
  };
  return service;
}

export type AgentsService = ReturnType<typeof createAgentsService>;
