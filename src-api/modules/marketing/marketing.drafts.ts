import { eq } from 'drizzle-orm';
import { requireTransaction, type Store } from '../../db/store';
import type { IdGenerator } from '../../lib/ids';
import type { AgentRow } from '../agents/agents.table';
import type { EventRow } from '../events/events.table';
import type { ReviewRow } from '../reviews/reviews.table';
import {
  generateMarketingContent,
  isMarketingEventType,
  MIN_PROMOTED_RATING,
  type GeneratedContent,
  type GenerationContext,
} from './marketing.generator';

export interface MarketingDraftsDeps {
  store: Store;
  ids: IdGenerator;
  /** Told when generating posts for an event fails; the directory write goes on regardless. */
  onGenerationError?: (error: unknown, event: EventRow) => void;
}

/** Inserts generated posts and A/B test rows, in the caller's store transaction (events.recordInTransaction's listener). */
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
 * its review row; undefined when the event makes no posts.
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
 * The drafts made from directory events: the events listener. It runs inside the event's
 * transaction, in a savepoint of its own, so a failure here never undoes the directory change
 * that caused the event (on PostgreSQL a failed statement would abort the whole transaction).
 */
export function createMarketingDrafts({ store, ids, onGenerationError = defaultGenerationErrorHandler }: MarketingDraftsDeps) {
  /** The event's agent and review rows, through the Store. */
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
     * Generates and stores the drafts for one outbox event, in the caller's store transaction
     * (events.recordInTransaction's listener), in a savepoint of its own.
     */
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
