import { and, count, desc, eq, inArray, isNotNull, ne, or, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { inTransaction, type Db } from '../../db/client';
import { requireTransaction, type Store } from '../../db/store';
import { ConflictError, NotFoundError, StaleVersionError, ValidationError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { Page } from '../../lib/schemas';
import { agents, type AgentRow } from '../agents/agents.table';
import type { AuditService } from '../audit/audit.service';
import type { EventsService } from '../events/events.service';
import { events as eventsTable, type EventRow } from '../events/events.table';
import { reviews, type ReviewRow } from '../reviews/reviews.table';
import { conversionRate, evaluateAbTest, wilsonInterval } from './ab-test-stats';
import {
  CHANNELS,
  generateMarketingContent,
  isMarketingEventType,
  MIN_PROMOTED_RATING,
  TONES,
  type GeneratedContent,
  type GenerationContext,
} from './marketing.generator';
import {
  abResultSchema,
  METRICS_WINDOW_DAYS,
  POST_STATUSES,
  postPatchSchema,
  type AbResult,
  type AbTestResult,
  type AdminMarketingPost,
  type Channel,
  type ListAbTestsQuery,
  type ListPostsQuery,
  type MarketingMetrics,
  type MarketingPost,
  type PostPatch,
  type Tone,
} from './marketing.schemas';
import { abTests, abTestVariants, marketingPosts, type AbTestRow, type AbTestVariantRow, type MarketingPostRow } from './marketing.table';

export interface MarketingServiceDeps {
  db: Db;
  /** handleEventInTransaction (events.recordInTransaction's listener) runs through it; the rest is not ported yet. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  events: EventsService;
  audit: AuditService;
  /** Told when generating posts for an event fails; the directory write goes on regardless. */
  onGenerationError?: (error: unknown, event: EventRow) => void;
}

export interface ModeratorOptions {
  actor: string;
  /** The version the moderator last saw; a different current version is a conflict. */
  expectedVersion?: number;
}

export function toMarketingPost(row: MarketingPostRow): MarketingPost {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    tone: row.tone as Tone,
    status: row.status,
    channel: row.channel as Channel,
    ...(row.agentId !== null && { agent_id: row.agentId }),
    created_at: row.createdAt,
    ...(row.publishedAt !== null && { published_at: row.publishedAt }),
  };
}

export function toAdminMarketingPost(row: MarketingPostRow): AdminMarketingPost {
  return { ...toMarketingPost(row), version: row.version, source_event_id: row.sourceEventId, source_event_type: row.sourceEventType };
}

/** A test with its variants, evaluated: rates, Wilson intervals, p-value and winner (see ab-test-stats.ts). */
export function toAbTestResult(test: AbTestRow, variants: AbTestVariantRow[]): AbTestResult {
  const ordered = [...variants].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  const evaluation = evaluateAbTest(ordered);
  return {
    id: test.id,
    name: test.name,
    status: test.status,
    created_at: test.createdAt,
    ...(test.completedAt !== null && { completed_at: test.completedAt }),
    variants: ordered.map((variant) => ({
      id: variant.id,
      label: variant.label,
      post_id: variant.postId,
      impressions: variant.impressions,
      conversions: variant.conversions,
      rate: conversionRate(variant),
      interval: wilsonInterval(variant),
    })),
    ...(evaluation.winner !== null && { winner: evaluation.winner }),
    ...(evaluation.pValue !== null && { p_value: evaluation.pValue }),
  };
}

/** Inserts generated posts and A/B test rows; call inside a sync transaction (events.record's listener). */
export function insertMarketingContent(db: Db, content: GeneratedContent): void {
  if (content.posts.length) db.insert(marketingPosts).values(content.posts).run();
  if (content.abTest) {
    db.insert(abTests).values(content.abTest.test).run();
    db.insert(abTestVariants).values(content.abTest.variants).run();
  }
}

/** The same rows through the Store, in the caller's store transaction (events.recordInTransaction's listener). */
async function insertMarketingContentInTransaction(store: Store, content: GeneratedContent): Promise<void> {
  const { marketingPosts, abTests, abTestVariants } = store.t;
  if (content.posts.length) await store.run(store.db.insert(marketingPosts).values(content.posts));
  if (content.abTest) {
    await store.run(store.db.insert(abTests).values(content.abTest.test));
    await store.run(store.db.insert(abTestVariants).values(content.abTest.variants));
  }
}

/**
 * What the templates need to know about the event's subject, from its agent and (review.created)
 * its review row; undefined when the event makes no posts. Both forms of the listener read the
 * rows their own way and decide here.
 */
function generationContext(event: EventRow, agent: AgentRow | undefined, review: ReviewRow | undefined): GenerationContext | undefined {
  if (!agent || !agent.listed) return undefined;
  if (event.type !== 'review.created') return { agent };
  if (review?.hidden) return undefined;
  const rating = typeof event.data.rating === 'number' ? event.data.rating : review?.rating;
  if (rating === undefined || rating < MIN_PROMOTED_RATING) return undefined;
  return { agent, review: { rating, comment: review?.comment ?? null, reviewerName: review?.reviewerName ?? null } };
}

const agentIdOf = (event: EventRow): string | undefined => (typeof event.data.agent_id === 'string' ? event.data.agent_id : undefined);
const reviewIdOf = (event: EventRow): string | undefined =>
  event.type === 'review.created' && typeof event.data.review_id === 'string' ? event.data.review_id : undefined;

/** The last `days` UTC dates (YYYY-MM-DD), oldest first, ending with today's. */
function lastUtcDays(now: Date, days: number): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

function parseOrThrow<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors = result.error.issues.map((issue) => ({
    pointer: `/${issue.path.join('/')}`,
    detail: issue.message,
  }));
  throw new ValidationError(`Invalid input: ${errors.map((e) => `${e.pointer} ${e.detail}`).join('; ')}`, errors);
}

function countsByKey(rows: Array<{ key: string | null; n: number }>, keys: readonly string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(keys.map((key) => [key, 0]));
  for (const row of rows) if (row.key !== null) out[row.key] = (out[row.key] ?? 0) + row.n;
  return out;
}

/** The audit actor of what the service decides by itself. */
const SYSTEM_ACTOR = 'system';

/** What the public API may show: published posts, and archived ones that had been published. */
const PUBLIC_POST = or(
  eq(marketingPosts.status, 'published'),
  and(eq(marketingPosts.status, 'archived'), isNotNull(marketingPosts.publishedAt)),
)!;

export function createMarketingService({ db, store, clock, ids, events, audit, onGenerationError }: MarketingServiceDeps) {
  const requirePost = (id: string): MarketingPostRow => {
    const row = db.select().from(marketingPosts).where(eq(marketingPosts.id, id)).get();
    if (!row) throw new NotFoundError('Marketing post', id);
    return row;
  };

  const requireTest = (id: string): AbTestRow => {
    const row = db.select().from(abTests).where(eq(abTests.id, id)).get();
    if (!row) throw new NotFoundError('A/B test', id);
    return row;
  };

  const variantsOf = (testIds: string[]): Map<string, AbTestVariantRow[]> => {
    const byTest = new Map<string, AbTestVariantRow[]>(testIds.map((id) => [id, []]));
    if (testIds.length === 0) return byTest;
    for (const variant of db.select().from(abTestVariants).where(inArray(abTestVariants.abTestId, testIds)).all()) {
      byTest.get(variant.abTestId)?.push(variant);
    }
    return byTest;
  };

  /** Writes a post change with the version check and bump, and audits it. */
  const changePost = (
    id: string,
    options: ModeratorOptions,
    action: string,
    change: (current: MarketingPostRow) => Partial<MarketingPostRow>,
  ): AdminMarketingPost =>
    inTransaction(db, () => {
      const current = requirePost(id);
      if (options.expectedVersion !== undefined && options.expectedVersion !== current.version) {
        throw new StaleVersionError('Marketing post', id);
      }
      const next: MarketingPostRow = { ...current, ...change(current), version: current.version + 1 };
      db.update(marketingPosts).set(next).where(eq(marketingPosts.id, id)).run();
      audit.record({
        actor: options.actor,
        action,
        entityType: 'marketing_post',
        entityId: id,
        before: toAdminMarketingPost(current),
        after: toAdminMarketingPost(next),
      });
      return toAdminMarketingPost(next);
    });

  /** The sync form's rows (events.record's callers), on the Db. */
  const contextFor = (event: EventRow): GenerationContext | undefined => {
    const agentId = agentIdOf(event);
    if (!agentId) return undefined;
    const agent = db.select().from(agents).where(eq(agents.id, agentId)).get();
    const reviewId = agent?.listed ? reviewIdOf(event) : undefined;
    const review = reviewId ? db.select().from(reviews).where(eq(reviews.id, reviewId)).get() : undefined;
    return generationContext(event, agent, review);
  };

  /** The in-transaction form's rows, through the Store. */
  const contextInTransaction = async (event: EventRow): Promise<GenerationContext | undefined> => {
    const agentId = agentIdOf(event);
    if (!agentId) return undefined;
    const { agents, reviews } = store.t;
    const agent = await store.first(store.db.select().from(agents).where(eq(agents.id, agentId)));
    const reviewId = agent?.listed ? reviewIdOf(event) : undefined;
    const review = reviewId ? await store.first(store.db.select().from(reviews).where(eq(reviews.id, reviewId))) : undefined;
    return generationContext(event, agent, review);
  };

  const service = {
    /**
     * Generates and stores the drafts for one outbox event. Runs inside the
     * event's transaction, in a savepoint of its own, so a failure here never
     * undoes the directory change that caused the event. The sync form, for
     * events.record's sync callers (agent-writes, reviews.create, claim decisions)
     * until they are ported.
     */
    handleEvent(event: EventRow): GeneratedContent | null {
      if (!isMarketingEventType(event.type)) return null;
      try {
        return db.$client.transaction(() => {
          const context = contextFor(event);
          if (!context) return null;
          const content = generateMarketingContent(event, context, ids);
          if (content.posts.length === 0) return null;
          insertMarketingContent(db, content);
          return content;
        })();
      } catch (error) {
        (onGenerationError ?? defaultGenerationErrorHandler)(error, event);
        return null;
      }
    },

    /** handleEvent in the caller's store transaction (events.recordInTransaction), in a savepoint of its own. */
    async handleEventInTransaction(event: EventRow): Promise<GeneratedContent | null> {
      if (!isMarketingEventType(event.type)) return null;
      requireTransaction(store, 'marketing.handleEventInTransaction');
      try {
        return await store.transaction(async () => {
          const context = await contextInTransaction(event);
          if (!context) return null;
          const content = generateMarketingContent(event, context, ids);
          if (content.posts.length === 0) return null;
          await insertMarketingContentInTransaction(store, content);
          return content;
        });
      } catch (error) {
        (onGenerationError ?? defaultGenerationErrorHandler)(error, event);
        return null;
      }
    },

    /**
     * Posts, newest first. `publicOnly` (the REST API): published posts and archived ones that
     * were published; drafts, scheduled posts and drafts archived unseen stay in the console.
     */
    listPosts(query: ListPostsQuery, { publicOnly = false }: { publicOnly?: boolean } = {}): Page<MarketingPost> {
      const filters: SQL[] = [];
      if (publicOnly) filters.push(PUBLIC_POST);
      if (query.status) filters.push(eq(marketingPosts.status, query.status));
      if (query.tone) filters.push(eq(marketingPosts.tone, query.tone));
      if (query.channel) filters.push(eq(marketingPosts.channel, query.channel));
      if (query.agent_id) filters.push(eq(marketingPosts.agentId, query.agent_id));
      const where = filters.length ? and(...filters) : undefined;
      const rows = db
        .select()
        .from(marketingPosts)
        .where(where)
        .orderBy(desc(marketingPosts.createdAt), desc(marketingPosts.id))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit)
        .all();
      const total = db.select({ n: count() }).from(marketingPosts).where(where).get()?.n ?? 0;
      return { items: rows.map(toMarketingPost), page: query.page, limit: query.limit, total };
    },

    /**
     * Archives every post generated from the `review.created` event of `reviewId` (they quote or
     * name it), in the caller's transaction: a hidden review is not promoted. Audited as `system`.
     */
    archivePostsOfReview(reviewId: string, cause: { actor: string }): number {
      const sourceEvents = db
        .select({ id: eventsTable.id })
        .from(eventsTable)
        .where(and(eq(eventsTable.type, 'review.created'), sql`json_extract(${eventsTable.data}, '$.review_id') = ${reviewId}`));
      const posts = db
        .select()
        .from(marketingPosts)
        .where(and(inArray(marketingPosts.sourceEventId, sourceEvents), ne(marketingPosts.status, 'archived')))
        .all();
      for (const current of posts) {
        const next: MarketingPostRow = { ...current, status: 'archived', version: current.version + 1 };
        db.update(marketingPosts).set(next).where(eq(marketingPosts.id, current.id)).run();
        audit.record({
          actor: SYSTEM_ACTOR,
          action: 'marketing_post.archive',
          entityType: 'marketing_post',
          entityId: current.id,
          before: toAdminMarketingPost(current),
          after: { ...toAdminMarketingPost(next), reason: `review ${reviewId} was hidden by ${cause.actor}` },
        });
      }
      return posts.length;
    },

    getPost(id: string): AdminMarketingPost {
      return toAdminMarketingPost(requirePost(id));
    },

    /** Edits a post's text, tone or channel; archived posts are final. */
    updatePost(id: string, patch: PostPatch, options: ModeratorOptions): AdminMarketingPost {
      const changes = parseOrThrow(postPatchSchema, patch);
      return changePost(id, options, 'marketing_post.update', (current) => {
        if (current.status === 'archived') throw new ConflictError(`Marketing post "${id}" is archived and can no longer be edited`);
        return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
      });
    },

    publishPost(id: string, actor: string, options: Omit<ModeratorOptions, 'actor'> = {}): AdminMarketingPost {
      return changePost(id, { ...options, actor }, 'marketing_post.publish', (current) => {
        if (current.status === 'published' || current.status === 'archived') {
          throw new ConflictError(`Marketing post "${id}" is ${current.status}; only drafts and scheduled posts can be published`);
        }
        return { status: 'published', publishedAt: isoNow(clock) };
      });
    },

    archivePost(id: string, actor: string, options: Omit<ModeratorOptions, 'actor'> = {}): AdminMarketingPost {
      return changePost(id, { ...options, actor }, 'marketing_post.archive', (current) => {
        if (current.status === 'archived') throw new ConflictError(`Marketing post "${id}" is already archived`);
        return { status: 'archived' };
      });
    },

    listAbTests(query: ListAbTestsQuery): Page<AbTestResult> {
      const where = query.status ? eq(abTests.status, query.status) : undefined;
      const tests = db
        .select()
        .from(abTests)
        .where(where)
        .orderBy(desc(abTests.createdAt), desc(abTests.id))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit)
        .all();
      const total = db.select({ n: count() }).from(abTests).where(where).get()?.n ?? 0;
      const variants = variantsOf(tests.map((test) => test.id));
      return {
        items: tests.map((test) => toAbTestResult(test, variants.get(test.id) ?? [])),
        page: query.page,
        limit: query.limit,
        total,
      };
    },

    getAbTest(id: string): AbTestResult {
      const test = requireTest(id);
      return toAbTestResult(test, variantsOf([id]).get(id) ?? []);
    },

    /** Adds impressions and conversions (from the channel's analytics) to a variant of a running test. */
    recordAbResult(variantId: string, counts: AbResult, options: { actor?: string } = {}): AbTestResult {
      const delta = parseOrThrow(abResultSchema, counts);
      return inTransaction(db, () => {
        const variant = db.select().from(abTestVariants).where(eq(abTestVariants.id, variantId)).get();
        if (!variant) throw new NotFoundError('A/B test variant', variantId);
        const test = requireTest(variant.abTestId);
        if (test.status !== 'running') throw new ConflictError(`A/B test "${test.id}" is completed; its results are final`);
        const next = { impressions: variant.impressions + delta.impressions, conversions: variant.conversions + delta.conversions };
        if (next.conversions > next.impressions) {
          throw new ValidationError('A variant cannot have more conversions than impressions', [
            { pointer: '/conversions', detail: `would be ${next.conversions}, above ${next.impressions} impressions` },
          ]);
        }
        db.update(abTestVariants).set(next).where(eq(abTestVariants.id, variantId)).run();
        if (options.actor) {
          audit.record({
            actor: options.actor,
            action: 'ab_test.record_result',
            entityType: 'ab_test',
            entityId: test.id,
            before: { variant_id: variantId, impressions: variant.impressions, conversions: variant.conversions },
            after: { variant_id: variantId, ...next },
          });
        }
        return service.getAbTest(test.id);
      });
    },

    /** Stops a running test; its counts are final from then on. */
    completeAbTest(id: string, actor: string): AbTestResult {
      return inTransaction(db, () => {
        const test = requireTest(id);
        if (test.status !== 'running') throw new ConflictError(`A/B test "${id}" is already completed`);
        const completedAt = isoNow(clock);
        db.update(abTests).set({ status: 'completed', completedAt }).where(eq(abTests.id, id)).run();
        const result = service.getAbTest(id);
        audit.record({
          actor,
          action: 'ab_test.complete',
          entityType: 'ab_test',
          entityId: id,
          before: { status: test.status },
          after: { status: 'completed', completed_at: completedAt, winner: result.winner ?? null, p_value: result.p_value ?? null },
        });
        return result;
      });
    },

    /** Tone and channel distributions and publish counts, all from stored posts. */
    metrics(): MarketingMetrics {
      const byTone = db.select({ key: marketingPosts.tone, n: count() }).from(marketingPosts).groupBy(marketingPosts.tone).all();
      const byChannel = db.select({ key: marketingPosts.channel, n: count() }).from(marketingPosts).groupBy(marketingPosts.channel).all();
      const byStatus = db.select({ key: marketingPosts.status, n: count() }).from(marketingPosts).groupBy(marketingPosts.status).all();

      // A post published on a day counts for that day even if it was archived later.
      const days = lastUtcDays(clock.now(), METRICS_WINDOW_DAYS);
      const from = `${days[0]}T00:00:00.000Z`;
      const until = new Date(Date.parse(`${days[days.length - 1]}T00:00:00.000Z`) + 86_400_000).toISOString();
      const publishedDay = sql<string>`substr(${marketingPosts.publishedAt}, 1, 10)`;
      const perDay = db
        .select({ day: publishedDay, n: count() })
        .from(marketingPosts)
        .where(and(sql`${marketingPosts.publishedAt} >= ${from}`, sql`${marketingPosts.publishedAt} < ${until}`))
        .groupBy(publishedDay)
        .all();
      const countOfDay = new Map(perDay.map((row) => [row.day, row.n]));

      const byStatusCounts = countsByKey(byStatus, POST_STATUSES);
      return {
        tone_distribution: countsByKey(byTone, TONES),
        channel_distribution: countsByKey(byChannel, CHANNELS),
        publish_counts: {
          total: Object.values(byStatusCounts).reduce((sum, n) => sum + n, 0),
          by_status: byStatusCounts,
          by_day: days.map((date) => ({ date, count: countOfDay.get(date) ?? 0 })),
        },
      };
    },
  };

  events.addListener({
    sync: (event) => void service.handleEvent(event),
    inTransaction: async (event) => void (await service.handleEventInTransaction(event)),
  });

  return service;
}

function defaultGenerationErrorHandler(error: unknown, event: EventRow): void {
  console.error(`marketing: could not generate posts for event ${event.id} (${event.type}):`, error);
}

export type MarketingService = ReturnType<typeof createMarketingService>;
