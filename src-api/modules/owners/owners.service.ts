import { and, eq } from 'drizzle-orm';
import type { Store } from '../../db/store';
import { ConflictError, NotFoundError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AgentsService } from '../agents/agents.service';
import type { AgentPatch, AgentProfile } from '../agents/agents.schemas';
import type { AgentRow, AgentStatus } from '../agents/agents.table';
import { toAgentProfile } from '../agents/agent-profile';
import type { AuditService } from '../audit/audit.service';
import { toReview } from '../reviews/reviews.service';
import type { Review } from '../reviews/reviews.schemas';
import type { EditRequestChanges, EditRequestRow, ReviewReplyRow } from './owners.table';

export interface OwnersServiceDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  agents: AgentsService;
  audit: AuditService;
}

/** Who acts: the owner account and how the audit log names it. */
export interface OwnerActor {
  accountId: string;
  actor: string;
}

/** What an owner's edit led to: applied at once, or (name, source) waiting for a moderator. */
export type OwnerEditOutcome = { kind: 'applied'; agent: AgentProfile } | { kind: 'requested'; id: string; status: 'pending' };

/**
 * What the owner of an agent (the account of its verified claim) does to it from /me/agents:
 * edits (name and source through the moderation queue), lifecycle, replies to reviews.
 * Every agent write goes through AgentsService, so rules, events and audit are the console's.
 * An agent the account does not own is a 404, the same as an unknown one.
 */
export function createOwnersService({ store, clock, ids, agents, audit }: OwnersServiceDeps) {
  const { editRequests, reviewReplies, reviews } = store.t;

  const ownedOrNotFound = (who: OwnerActor, agentId: string, row: AgentRow | undefined): AgentRow => {
    if (!row || row.ownerAccountId !== who.accountId) throw new NotFoundError('Agent', agentId);
    return row;
  };

  /**
   * The owned agent, read for a write inside the writing transaction: its row locked (FOR UPDATE
   * on PostgreSQL), so an owner's two edits or replies at once queue, and the second sees the
   * first (its pending edit request, its reply).
   */
  const lockOwned = async (who: OwnerActor, agentId: string): Promise<AgentRow> =>
    ownedOrNotFound(who, agentId, await agents.edits.lockRow(agentId, { includeUnlisted: true }));

  return {
    /** The owned agent's profile (listed or not). */
    async get(who: OwnerActor, agentId: string): Promise<AgentProfile> {
      return toAgentProfile(ownedOrNotFound(who, agentId, await agents.findRowAsync(agentId)));
    },

    /**
     * Profile fields are applied at once (`agent.updated`); a new name or source_url becomes a
     * pending edit request with the values it replaces. Both in one transaction.
     */
    edit(who: OwnerActor, agentId: string, patch: AgentPatch): Promise<OwnerEditOutcome> {
      return store.transaction(async () => {
        const current = await lockOwned(who, agentId);
        const { name, source_url: sourceUrl, ...direct } = patch;
        const changes: EditRequestChanges = {};
        const before: EditRequestChanges = {};
        if (name !== undefined && name !== current.name) [changes.name, before.name] = [name, current.name];
        if (sourceUrl !== undefined && sourceUrl !== current.sourceUrl)
          [changes.source_url, before.source_url] = [sourceUrl, current.sourceUrl];

        if (Object.keys(changes).length > 0) {
          const waiting = await store.first(
            store.db
              .select({ id: editRequests.id })
              .from(editRequests)
              .where(and(eq(editRequests.agentId, agentId), eq(editRequests.status, 'pending')))
              .limit(1),
          );
          if (waiting) throw new ConflictError(`Agent "${agentId}" already has an edit request waiting for a moderator (${waiting.id})`);
        }
        const updated = await agents.edits.update(agentId, direct, { actor: who.actor });
        if (Object.keys(changes).length === 0) return { kind: 'applied', agent: toAgentProfile(updated) };

        const now = isoNow(clock);
        const row: EditRequestRow = {
          id: ids.next('edr'),
          agentId,
          accountId: who.accountId,
          changes,
          before,
          status: 'pending',
          reason: null,
          decidedBy: null,
          decidedAt: null,
          version: 1,
          createdAt: now,
          updatedAt: now,
        };
        await store.run(store.db.insert(editRequests).values(row));
        await audit.recordInTransaction({
          actor: who.actor,
          action: 'edit_request.create',
          entityType: 'edit_request',
          entityId: row.id,
          after: { agent_id: agentId, changes, before },
        });
        return { kind: 'requested', id: row.id, status: 'pending' };
      });
    },

    /** Deprecates the owned agent (with a message) or makes it active again (`agent.updated`). */
    setStatus(who: OwnerActor, agentId: string, status: AgentStatus, message: string | undefined): Promise<AgentProfile> {
      return store.transaction(async () => {
        await lockOwned(who, agentId);
        return toAgentProfile(await agents.edits.setStatus(agentId, status, message ?? null, { actor: who.actor }));
      });
    },

    /** The owner's answer to a review of the owned agent; a second reply replaces the first. */
    reply(who: OwnerActor, agentId: string, reviewId: string, body: string): Promise<Review> {
      return store.transaction(async () => {
        await lockOwned(who, agentId);
        const review = await store.first(
          store.db
            .select()
            .from(reviews)
            .where(and(eq(reviews.id, reviewId), eq(reviews.agentId, agentId), eq(reviews.hidden, false)))
            .limit(1),
        );
        if (!review) throw new NotFoundError('Review', reviewId);
        const now = isoNow(clock);
        const existing = await store.first(store.db.select().from(reviewReplies).where(eq(reviewReplies.reviewId, reviewId)).limit(1));
        const row: ReviewReplyRow = existing
          ? { ...existing, body, accountId: who.accountId, updatedAt: now }
          : { id: ids.next('rpl'), reviewId, agentId, accountId: who.accountId, body, createdAt: now, updatedAt: now };
        if (existing) await store.run(store.db.update(reviewReplies).set(row).where(eq(reviewReplies.id, existing.id)));
        else await store.run(store.db.insert(reviewReplies).values(row));
        await audit.recordInTransaction({
          actor: who.actor,
          action: 'review.reply',
          entityType: 'review',
          entityId: reviewId,
          before: existing ? { body: existing.body } : null,
          after: { body },
        });
        return toReview(review, row);
      });
    },
  };
}

export type OwnersService = ReturnType<typeof createOwnersService>;
