import { and, eq } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { ConflictError, NotFoundError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AgentsService } from '../agents/agents.service';
import type { AgentPatch, AgentProfile } from '../agents/agents.schemas';
import type { AgentRow, AgentStatus } from '../agents/agents.table';
import { toAgentProfile } from '../agents/agent-profile';
import type { AuditService } from '../audit/audit.service';
import { reviews } from '../reviews/reviews.table';
import { toReview } from '../reviews/reviews.service';
import type { Review } from '../reviews/reviews.schemas';
import { editRequests, reviewReplies, type EditRequestChanges, type EditRequestRow, type ReviewReplyRow } from './owners.table';

export interface OwnersServiceDeps {
  db: Db;
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
export function createOwnersService({ db, clock, ids, agents, audit }: OwnersServiceDeps) {
  const requireOwned = (who: OwnerActor, agentId: string): AgentRow => {
    const row = agents.findRow(agentId);
    if (!row || row.ownerAccountId !== who.accountId) throw new NotFoundError('Agent', agentId);
    return row;
  };

  return {
    /** The owned agent's profile (listed or not). */
    get(who: OwnerActor, agentId: string): AgentProfile {
      return toAgentProfile(requireOwned(who, agentId));
    },

    /**
     * Profile fields are applied at once (`agent.updated`); a new name or source_url becomes a
     * pending edit request with the values it replaces. Both in one transaction.
     */
    edit(who: OwnerActor, agentId: string, patch: AgentPatch): OwnerEditOutcome {
      return inTransaction(db, () => {
        const current = requireOwned(who, agentId);
        const { name, source_url: sourceUrl, ...direct } = patch;
        const changes: EditRequestChanges = {};
        const before: EditRequestChanges = {};
        if (name !== undefined && name !== current.name) [changes.name, before.name] = [name, current.name];
        if (sourceUrl !== undefined && sourceUrl !== current.sourceUrl)
          [changes.source_url, before.source_url] = [sourceUrl, current.sourceUrl];

        if (Object.keys(changes).length > 0) {
          const waiting = db
            .select({ id: editRequests.id })
            .from(editRequests)
            .where(and(eq(editRequests.agentId, agentId), eq(editRequests.status, 'pending')))
            .get();
          if (waiting) throw new ConflictError(`Agent "${agentId}" already has an edit request waiting for a moderator (${waiting.id})`);
        }
        const updated = agents.update(agentId, direct, { actor: who.actor });
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
        db.insert(editRequests).values(row).run();
        audit.record({
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
    setStatus(who: OwnerActor, agentId: string, status: AgentStatus, message: string | undefined): AgentProfile {
      return inTransaction(db, () => {
        requireOwned(who, agentId);
        return toAgentProfile(agents.setStatus(agentId, status, message ?? null, { actor: who.actor }));
      });
    },

    /** The owner's answer to a review of the owned agent; a second reply replaces the first. */
    reply(who: OwnerActor, agentId: string, reviewId: string, body: string): Review {
      return inTransaction(db, () => {
        requireOwned(who, agentId);
        const review = db
          .select()
          .from(reviews)
          .where(and(eq(reviews.id, reviewId), eq(reviews.agentId, agentId), eq(reviews.hidden, false)))
          .get();
        if (!review) throw new NotFoundError('Review', reviewId);
        const now = isoNow(clock);
        const existing = db.select().from(reviewReplies).where(eq(reviewReplies.reviewId, reviewId)).get();
        const row: ReviewReplyRow = existing
          ? { ...existing, body, accountId: who.accountId, updatedAt: now }
          : { id: ids.next('rpl'), reviewId, agentId, accountId: who.accountId, body, createdAt: now, updatedAt: now };
        if (existing) db.update(reviewReplies).set(row).where(eq(reviewReplies.id, existing.id)).run();
        else db.insert(reviewReplies).values(row).run();
        audit.record({
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
