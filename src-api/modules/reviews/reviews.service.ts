import { and, count, desc, eq, gte, type SQL } from 'drizzle-orm';
import { insertionOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { DuplicateReviewError, NotFoundError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { Page, PageQuery } from '../../lib/schemas';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import type { EventsService } from '../events/events.service';
import type { ListRecentReviewsQuery, ModeratedReview, Review, ReviewInput } from './reviews.schemas';
import type { ReviewReplyRow } from '../owners/owners.table';
import type { ReviewRow } from './reviews.table';

export interface ReviewsServiceDeps {
  /** Every read and write runs through the data-access seam, on SQLite and PostgreSQL alike. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  agents: AgentsService;
  events: EventsService;
  audit: AuditService;
  /** One review per agent per writer in this window; disabled with the rate limits. */
  quota: { enabled: boolean; windowMs: number };
}

/** What runs inside the transaction that hides a review (awaited). */
export type HiddenListener = (review: ModeratedReview, actor: string) => unknown;

export function toReview(row: ReviewRow, reply: ReviewReplyRow | null = null): Review {
  return {
    id: row.id,
    agent_id: row.agentId,
    rating: row.rating,
    comment: row.comment,
    reviewer_name: row.reviewerName,
    verified_reviewer: row.accountId !== null,
    created_at: row.createdAt,
    reply: reply ? { body: reply.body, created_at: reply.createdAt, updated_at: reply.updatedAt } : null,
  };
}

function toModeratedReview(row: ReviewRow, agentName: string, reply: ReviewReplyRow | null): ModeratedReview {
  return { ...toReview(row, reply), hidden: row.hidden, agent_name: agentName };
}

export function createReviewsService({ store, clock, ids, agents: agentsService, events, audit, quota }: ReviewsServiceDeps) {
  // Reviews of one millisecond: on SQLite in the order they were written (insertionOrder says why not on PostgreSQL).
  const newestFirst = () => [desc(store.t.reviews.createdAt), desc(insertionOrder(store, store.t.reviews))];
  const countWhere = async (where: SQL | undefined): Promise<number> =>
    (await store.first(store.db.select({ n: count() }).from(store.t.reviews).where(where)))?.n ?? 0;

  /** Reviews with their agent's name and the owner's reply (the console's view), narrowed by `where` (built on store.t). */
  const moderatedReviews = (where: SQL | undefined) => {
    const { reviews, agents, reviewReplies } = store.t;
    return store.db
      .select({ review: reviews, agentName: agents.name, reply: reviewReplies })
      .from(reviews)
      .innerJoin(agents, eq(agents.id, reviews.agentId))
      .leftJoin(reviewReplies, eq(reviewReplies.reviewId, reviews.id))
      .where(where);
  };

  /** A page of reviews with their agent's name, newest first. */
  const moderatedPage = async (where: SQL | undefined, query: PageQuery): Promise<Page<ModeratedReview>> => {
    const rows = await store.rows(
      moderatedReviews(where)
        .orderBy(...newestFirst())
        .limit(query.limit)
        .offset((query.page - 1) * query.limit),
    );
    return {
      items: rows.map(({ review, agentName, reply }) => toModeratedReview(review, agentName, reply)),
      page: query.page,
      limit: query.limit,
      total: await countWhere(where),
    };
  };

  const requireModeratedReview = async (reviewId: string): Promise<ModeratedReview> => {
    const found = await store.first(moderatedReviews(eq(store.t.reviews.id, reviewId)).limit(1));
    if (!found) throw new NotFoundError('Review', reviewId);
    return toModeratedReview(found.review, found.agentName, found.reply);
  };

  const hiddenListeners: HiddenListener[] = [];

  return {
    /**
     * Runs `listener` inside the store transaction that hides a review, awaited (marketing archives the
     * posts quoting it: archivePostsOfReviewInTransaction); its writes commit or roll back with the hide.
     */
    onHidden(listener: HiddenListener): void {
      hiddenListeners.push(listener);
    },

    /**
     * Adds a review to a listed agent: the row, the agent's rating aggregate
     * and trust score, and the `review.created` event commit together.
     */
    /**
     * `writer.accountId` when written with an account (the review then shows verified_reviewer);
     * `writer.client` (the hashed IP bucket, http/rate-limit quotaClientKey) otherwise. Quota: one review per agent per account, or per
     * client without one, per `reviewQuotaMs` (409 duplicate_review); off with the rate limits.
     */
    async create(agentId: string, input: ReviewInput, writer: { accountId?: string | null; client?: string } = {}): Promise<Review> {
      const accountId = writer.accountId ?? null;
      const clientKey = writer.client ?? null;
      return store.transaction(async () => {
        // 404 for unknown and unlisted agents. The row stays locked to the end: reviews of one agent are
        // written one after another on PostgreSQL too, so two at once both count and the quota holds.
        const agent = await agentsService.edits.lockRow(agentId);
        const { reviews } = store.t;
        if (quota.enabled && (accountId !== null || clientKey !== null)) {
          const since = new Date(clock.now().getTime() - quota.windowMs).toISOString();
          const who = accountId !== null ? eq(reviews.accountId, accountId) : eq(reviews.clientKey, clientKey!);
          const recent = await store.first(
            store.db
              .select({ id: reviews.id })
              .from(reviews)
              .where(and(who, eq(reviews.agentId, agentId), gte(reviews.createdAt, since)))
              .limit(1),
          );
          if (recent) throw new DuplicateReviewError();
        }
        const row: ReviewRow = {
          id: ids.next('rev'),
          agentId,
          rating: input.rating,
          comment: input.comment,
          reviewerName: input.reviewer_name,
          hidden: false,
          accountId,
          clientKey,
          createdAt: isoNow(clock),
        };
        await store.run(store.db.insert(reviews).values(row));
        await agentsService.edits.applyRating(agent, +1, row.rating);
        const review = toReview(row);
        await events.recordInTransaction('review.created', {
          review_id: review.id,
          agent_id: review.agent_id,
          rating: review.rating,
          comment: review.comment,
          reviewer_name: review.reviewer_name,
          created_at: review.created_at,
        });
        return review;
      });
    },

    /** The public list of a listed agent's reviews: visible ones only, newest first. */
    async listVisible(agentId: string, query: PageQuery): Promise<Page<Review>> {
      await agentsService.get(agentId); // 404 for unknown and unlisted agents
      const { reviews, reviewReplies } = store.t;
      const where = and(eq(reviews.agentId, agentId), eq(reviews.hidden, false));
      const rows = await store.rows(
        store.db
          .select({ review: reviews, reply: reviewReplies })
          .from(reviews)
          .leftJoin(reviewReplies, eq(reviewReplies.reviewId, reviews.id))
          .where(where)
          .orderBy(...newestFirst())
          .limit(query.limit)
          .offset((query.page - 1) * query.limit),
      );
      return {
        items: rows.map(({ review, reply }) => toReview(review, reply)),
        page: query.page,
        limit: query.limit,
        total: await countWhere(where),
      };
    },

    /** Console: every review of an agent (listed or not), hidden ones flagged. */
    async listForAgent(agentId: string, query: PageQuery): Promise<Page<ModeratedReview>> {
      await agentsService.getRow(agentId);
      return moderatedPage(eq(store.t.reviews.agentId, agentId), query);
    },

    /** Console: the latest reviews across the directory; `hidden` narrows to hidden or visible ones. */
    async listRecent(query: ListRecentReviewsQuery): Promise<Page<ModeratedReview>> {
      return moderatedPage(query.hidden === undefined ? undefined : eq(store.t.reviews.hidden, query.hidden), query);
    },

    /** Console: one review, hidden or not. */
    get: requireModeratedReview,

    /**
     * Console: hides a review (spam) or shows it again. A hidden review does not
     * count in the agent's rating, so the aggregate moves with it.
     */
    setHidden(reviewId: string, hidden: boolean, actor: string): Promise<ModeratedReview> {
      return store.transaction(async () => {
        // The review locked first: two moderators hiding it at once, the second finds it hidden and the rating moves once.
        const { reviews } = store.t;
        const locked = await store.first(
          store.forUpdate(store.db.select({ id: reviews.id }).from(reviews).where(eq(reviews.id, reviewId)).limit(1)),
        );
        if (!locked) throw new NotFoundError('Review', reviewId);
        const before = await requireModeratedReview(reviewId);
        if (before.hidden === hidden) return before;
        const agent = await agentsService.edits.lockRow(before.agent_id, { includeUnlisted: true });
        await store.run(store.db.update(reviews).set({ hidden }).where(eq(reviews.id, reviewId)));
        const direction = hidden ? -1 : +1;
        await agentsService.edits.applyRating(agent, direction, direction * before.rating);
        const after: ModeratedReview = { ...before, hidden };
        await audit.recordInTransaction({
          actor,
          action: hidden ? 'review.hide' : 'review.unhide',
          entityType: 'review',
          entityId: reviewId,
          before,
          after,
        });
        if (hidden) for (const listener of hiddenListeners) await listener(after, actor);
        return after;
      });
    },
  };
}

export type ReviewsService = ReturnType<typeof createReviewsService>;
