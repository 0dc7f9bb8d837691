import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { requireTransaction, type Store } from '../../db/store';
import type { IdGenerator } from '../../lib/ids';
import { agents, type AgentRow } from '../agents/agents.table';
import type { EventRow } from '../events/events.table';
import { reviews, type ReviewRow } from '../reviews/reviews.table';
import {
  generateMarketingContent,
  isMarketingEventType,
  MIN_PROMOTED_RATING,
  type GeneratedContent,
  type GenerationContext,
} from './marketing.generator';
import { abTests, abTestVariants, marketingPosts } from './marketing.table';

export interface MarketingDraftsDeps {
  /** The sync form's Db (events.record's callers); unused on PostgreSQL. */
  db: Db;
  store: Store;
  ids: IdGenerator;
  /** Told when generating posts for an event fails; the directory write goes on regardless. */
  onGenerationError?: (error: unknown, event: EventRow) => void;
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

/**
 * The drafts made from directory events: the events listener's two forms. Each runs inside the
 * event's transaction, in a savepoint of its own, so a failure here never undoes the directory
 * change that caused the event (on PostgreSQL a failed statement would abort the whole transaction).
 */
export function createMarketingDrafts({ db, store, ids, onGenerationError = defaultGenerationErrorHandler }: MarketingDraftsDeps) {
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

  return {
    /**
     * Generates and stores the drafts for one outbox event, in the caller's sync transaction. The
     * sync form, for events.record's sync callers (agent-writes, reviews.create, claim decisions)
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
        onGenerationError(error, event);
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
        onGenerationError(error, event);
        return null;
      }
    },
  };
}

function defaultGenerationErrorHandler(error: unknown, event: EventRow): void {
  console.error(`marketing: could not generate posts for event ${event.id} (${event.type}):`, error);
}
