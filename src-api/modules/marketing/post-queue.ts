import { inArray } from 'drizzle-orm';
import type { Store } from '../../db/store';
import { AppError } from '../../errors';
import type { Page } from '../../lib/schemas';
import type { ListPostsQuery, MarketingPost } from './marketing.schemas';
import type { MarketingService } from './marketing.service';

/** A post as the console's list shows it: with the name of the agent it is about. */
export interface QueuedPost extends MarketingPost {
  agent_name: string | null;
}

export type PostDecision = 'publish' | 'archive';

/** What happened to one post of a bulk decision. */
export type PostDecisionResult =
  { id: string; ok: true; status: MarketingPost['status'] } | { id: string; ok: false; code: string; error: string };

/** At most this many posts per bulk decision: a page of the list. */
export const MAX_BULK_POSTS = 100;

/**
 * The console's side of the marketing posts: the list with agent names, and decisions on many
 * posts at once. Each post is decided through the one write path (publishPost / archivePost), on
 * its own: a post someone else archived meanwhile fails alone, the rest go through.
 */
export function createPostQueue({ store, marketing }: { store: Store; marketing: MarketingService }) {
  return {
    async list(query: ListPostsQuery): Promise<Page<QueuedPost>> {
      const page = await marketing.listPosts(query);
      const ids = [...new Set(page.items.flatMap((post) => (post.agent_id ? [post.agent_id] : [])))];
      const { agents } = store.t;
      const rows =
        ids.length === 0
          ? []
          : await store.rows(store.db.select({ id: agents.id, name: agents.name }).from(agents).where(inArray(agents.id, ids)));
      const names = new Map(rows.map((row) => [row.id, row.name] as const));
      return {
        ...page,
        items: page.items.map((post) => ({ ...post, agent_name: post.agent_id ? (names.get(post.agent_id) ?? null) : null })),
      };
    },

    /** One post after another, each in its own transaction. */
    async decide(ids: readonly string[], decision: PostDecision, actor: string): Promise<PostDecisionResult[]> {
      const results: PostDecisionResult[] = [];
      for (const id of new Set(ids)) {
        try {
          const post = decision === 'publish' ? await marketing.publishPost(id, actor) : await marketing.archivePost(id, actor);
          results.push({ id, ok: true, status: post.status });
        } catch (error) {
          if (error instanceof AppError) results.push({ id, ok: false, code: error.code, error: error.detail });
          else throw error;
        }
      }
      return results;
    },
  };
}

export type PostQueue = ReturnType<typeof createPostQueue>;
