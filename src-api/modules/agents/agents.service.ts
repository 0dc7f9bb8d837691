import { and, asc, eq, ne, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { byteOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import type { Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { sourceUrlKey } from '../../lib/urls';
import type { AuditService } from '../audit/audit.service';
import type { AgentInput, AgentPatch } from './agents.schemas';
import {
  changeOf,
  createAgentEdits,
  createdAudit,
  newAgentRow,
  updateEdit,
  type CreateOptions,
  type Edit,
  type EditOptions,
} from './agent-edits';
import { createAgentReads } from './agent-reads';
import type { AgentWrites } from './agent-writes';
import type { AgentRow, AgentSkill } from './agents.table';
import { createTrustRefresh } from './trust-refresh';

export interface AgentsServiceDeps {
  db: Db;
  /** The data-access seam the ported reads (agent-reads.ts) run on: on SQLite, over the same connection as `db`. */
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

export interface WriteOptions {
  /** Who did it, for the audit log; omitted for public and system writes. */
  actor?: string;
  /** Record the contract's webhook event (false for demo seeding and plain imports). */
  emitEvents?: boolean;
  /** The version the caller last saw; a different current version is a conflict. */
  expectedVersion?: number;
}

export function createAgentsService({ db, store, clock, ids, audit, writes, profileCacheEntries }: AgentsServiceDeps) {
  const reads = createAgentReads({ store, profileCacheEntries });
  const trustRefresh = createTrustRefresh({ db, store, clock, writes });
  // The sync forms below (tests and benches only) read synchronously.
  const requireRow = reads.sync.requireRow;
  /** Carries out an edit's plan (agent-edits.ts) synchronously, for callers inside sync transactions. */
  const applyEdit = (id: string, edit: Edit, options: EditOptions): AgentRow =>
    inTransaction(db, () => {
      const current = requireRow(id, true);
      const plan = edit(current);
      const change = changeOf(writes, current, plan, options);
      if (!change) return current;
      const next = writes.update(change, { emitEvents: options.emitEvents !== false, via: options.via });
      if (plan.audit) audit.record(plan.audit(next));
      return next;
    });

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
     * Lists a new agent. Call inside a transaction when other writes belong with it; on its own it
     * opens one. Sync form of `edits.create`, kept for the tests and benches that list agents
     * synchronously (no service calls it).
     */
    create(input: AgentInput, options: CreateOptions = {}): AgentRow {
      return inTransaction(db, () => {
        const row = writes.create(newAgentRow(writes, ids, clock, input, options), { emitEvents: options.emitEvents !== false });
        if (options.actor) audit.record(createdAudit(options.actor, row));
        return row;
      });
    },

    /**
     * Changes profile fields; records `agent.updated` with the names of the changed fields.
     * Sync form of `edits.update`, kept for the tests and benches that write synchronously (no service calls it).
     */
    update(id: string, patch: AgentPatch, options: WriteOptions = {}): AgentRow {
      return applyEdit(id, updateEdit(patch, options), options);
    },

    /**
     * The agent writes other modules call, async on either store, in the caller's store transaction
     * (a savepoint) or one of their own: update, setVerified, setStatus, setListed (the console's tRPC
     * procedures), renameOwner, detachOwner. See agent-edits.ts.
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
