import { and, count, desc, eq, inArray, isNotNull, ne, or, type SQL } from 'drizzle-orm';
import { byteOrder, jsonText } from '../../db/dialect-sql';
import { requireTransaction, type Store } from '../../db/store';
import { ConflictError, NotFoundError, StaleVersionError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { Page } from '../../lib/schemas';
import type { AuditEntry, AuditService } from '../audit/audit.service';
import { postPatchSchema, type AdminMarketingPost, type ListPostsQuery, type MarketingPost, type PostPatch } from './marketing.schemas';
import type { MarketingPostRow } from './marketing.table';
import { parseOrThrow, toAdminMarketingPost, toMarketingPost } from './marketing.views';

export interface MarketingPostsDeps {
  store: Store;
  clock: Clock;
  audit: AuditService;
}

export interface ModeratorOptions {
  actor: string;
  /** The version the moderator last saw; a different current version is a conflict. */
  expectedVersion?: number;
}

/** The audit actor of what the service decides by itself. */
const SYSTEM_ACTOR = 'system';

/** A post archived because the review it was generated from was hidden: the row and its audit entry. */
function archivedForReview(
  current: MarketingPostRow,
  reviewId: string,
  cause: { actor: string },
): { next: MarketingPostRow; entry: AuditEntry } {
  const next: MarketingPostRow = { ...current, status: 'archived', version: current.version + 1 };
  return {
    next,
    entry: {
      actor: SYSTEM_ACTOR,
      action: 'marketing_post.archive',
      entityType: 'marketing_post',
      entityId: current.id,
      before: toAdminMarketingPost(current),
      after: { ...toAdminMarketingPost(next), reason: `review ${reviewId} was hidden by ${cause.actor}` },
    },
  };
}

/** The posts: lists, the moderators' edits (version-checked, audited) and the archiving of a hidden review's posts. */
export function createMarketingPosts({ store, clock, audit }: MarketingPostsDeps) {
  /** The post, locked until the transaction ends (PostgreSQL): its version check and bump are one step. */
  const lockPost = async (id: string): Promise<MarketingPostRow> => {
    const { marketingPosts } = store.t;
    const row = await store.first(store.forUpdate(store.db.select().from(marketingPosts).where(eq(marketingPosts.id, id))));
    if (!row) throw new NotFoundError('Marketing post', id);
    return row;
  };

  /** Writes a post change with the version check and bump, and audits it, in one store transaction. */
  const changePost = (
    id: string,
    options: ModeratorOptions,
    action: string,
    change: (current: MarketingPostRow) => Partial<MarketingPostRow>,
  ): Promise<AdminMarketingPost> =>
    store.transaction(async () => {
      const current = await lockPost(id);
      if (options.expectedVersion !== undefined && options.expectedVersion !== current.version) {
        throw new StaleVersionError('Marketing post', id);
      }
      const next: MarketingPostRow = { ...current, ...change(current), version: current.version + 1 };
      const { marketingPosts } = store.t;
      await store.run(store.db.update(marketingPosts).set(next).where(eq(marketingPosts.id, id)));
      await audit.recordInTransaction({
        actor: options.actor,
        action,
        entityType: 'marketing_post',
        entityId: id,
        before: toAdminMarketingPost(current),
        after: toAdminMarketingPost(next),
      });
      return toAdminMarketingPost(next);
    });

  return {
    /**
     * Posts, newest first. `publicOnly` (the REST API): published posts and archived ones that
     * were published; drafts, scheduled posts and drafts archived unseen stay in the console.
     */
    async listPosts(query: ListPostsQuery, { publicOnly = false }: { publicOnly?: boolean } = {}): Promise<Page<MarketingPost>> {
      const { marketingPosts } = store.t;
      const filters: SQL[] = [];
      // What the public API may show: published posts, and archived ones that had been published.
      if (publicOnly) {
        filters.push(
          or(eq(marketingPosts.status, 'published'), and(eq(marketingPosts.status, 'archived'), isNotNull(marketingPosts.publishedAt)))!,
        );
      }
      if (query.status) filters.push(eq(marketingPosts.status, query.status));
      if (query.tone) filters.push(eq(marketingPosts.tone, query.tone));
      if (query.channel) filters.push(eq(marketingPosts.channel, query.channel));
      if (query.agent_id) filters.push(eq(marketingPosts.agentId, query.agent_id));
      const where = filters.length ? and(...filters) : undefined;
      const rows = await store.rows(
        store.db
          .select()
          .from(marketingPosts)
          .where(where)
          // The posts of one event share its time: by id then, in byte order on both stores.
          .orderBy(desc(marketingPosts.createdAt), desc(byteOrder(store, marketingPosts.id)))
          .limit(query.limit)
          .offset((query.page - 1) * query.limit),
      );
      const total = (await store.first(store.db.select({ n: count() }).from(marketingPosts).where(where)))?.n ?? 0;
      return { items: rows.map(toMarketingPost), page: query.page, limit: query.limit, total };
    },

    async getPost(id: string): Promise<AdminMarketingPost> {
      const { marketingPosts } = store.t;
      const row = await store.first(store.db.select().from(marketingPosts).where(eq(marketingPosts.id, id)));
      if (!row) throw new NotFoundError('Marketing post', id);
      return toAdminMarketingPost(row);
    },

    /** Edits a post's text, tone or channel; archived posts are final. */
    async updatePost(id: string, patch: PostPatch, options: ModeratorOptions): Promise<AdminMarketingPost> {
      const changes = parseOrThrow(postPatchSchema, patch);
      return changePost(id, options, 'marketing_post.update', (current) => {
        if (current.status === 'archived') throw new ConflictError(`Marketing post "${id}" is archived and can no longer be edited`);
        return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
      });
    },

    publishPost(id: string, actor: string, options: Omit<ModeratorOptions, 'actor'> = {}): Promise<AdminMarketingPost> {
      return changePost(id, { ...options, actor }, 'marketing_post.publish', (current) => {
        if (current.status === 'published' || current.status === 'archived') {
          throw new ConflictError(`Marketing post "${id}" is ${current.status}; only drafts and scheduled posts can be published`);
        }
        return { status: 'published', publishedAt: isoNow(clock) };
      });
    },

    archivePost(id: string, actor: string, options: Omit<ModeratorOptions, 'actor'> = {}): Promise<AdminMarketingPost> {
      return changePost(id, { ...options, actor }, 'marketing_post.archive', (current) => {
        if (current.status === 'archived') throw new ConflictError(`Marketing post "${id}" is already archived`);
        return { status: 'archived' };
      });
    },

    /**
     * Archives every post generated from the `review.created` event of `reviewId` (they quote or
     * name it), in the caller's store transaction (throws outside one): a hidden review is not
     * promoted. Audited as `system`. reviews.setHidden calls it (services.ts, `reviews.onHidden`).
     */
    async archivePostsOfReviewInTransaction(reviewId: string, cause: { actor: string }): Promise<number> {
      requireTransaction(store, 'marketing.archivePostsOfReviewInTransaction');
      const { events, marketingPosts } = store.t;
      const sourceEvents = store.db
        .select({ id: events.id })
        .from(events)
        .where(and(eq(events.type, 'review.created'), eq(jsonText(store, events.data, 'review_id'), reviewId)));
      const posts = await store.rows(
        store.forUpdate(
          store.db
            .select()
            .from(marketingPosts)
            .where(and(inArray(marketingPosts.sourceEventId, sourceEvents), ne(marketingPosts.status, 'archived'))),
        ),
      );
      for (const current of posts) {
        const { next, entry } = archivedForReview(current, reviewId, cause);
        await store.run(store.db.update(marketingPosts).set(next).where(eq(marketingPosts.id, current.id)));
        await audit.recordInTransaction(entry);
      }
      return posts.length;
    },
  };
}
