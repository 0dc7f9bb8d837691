import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { ConflictError, NotFoundError, StaleVersionError } from '../../src-api/errors';
import { createAuditService, type AuditService } from '../../src-api/modules/audit/audit.service';
import { createEventsService, type EventsService } from '../../src-api/modules/events/events.service';
import { TONES } from '../../src-api/modules/marketing/marketing.generator';
import { createMarketingService, type MarketingService } from '../../src-api/modules/marketing/marketing.service';
import { createPostQueue, type PostQueue } from '../../src-api/modules/marketing/post-queue';
import { agentRow, bothStores } from '../helpers/both-stores';

/**
 * Marketing on the data-access seam, on SQLite and PostgreSQL 15: drafts made from
 * events, the post lists, the moderators' edits (version-checked, locked, audited),
 * A/B test results (locked: reports at once all count, none after completion), the
 * metrics, the console's post queue, and archiving a hidden review's posts in the
 * caller's transaction. test/api/marketing*.test.ts cover HTTP and tRPC on SQLite.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const NOW = '2025-07-01T10:00:00.000Z';

describe.each(stores.dialects)('marketing on $dialect', ({ open }) => {
  let store: Store;
  let audit: AuditService;
  let events: EventsService;
  let marketing: MarketingService;
  let postQueue: PostQueue;
  let counter = 0;
  const ids = { next: (prefix: string) => `${prefix}_${String(++counter).padStart(6, '0')}`, agent: () => 'agt_unused' };
  const clock = { now: () => new Date(NOW) };

  const record = (type: 'agent.registered' | 'review.created', data: Record<string, unknown>) =>
    store.transaction(() => events.recordInTransaction(type, data));
  /** Opens the pool's four connections, so that four transactions started at once really run side by side. */
  const warmPool = async () => {
    if (store.dialect === 'postgres')
      await Promise.all(Array.from({ length: 4 }, () => store.transaction(() => store.all(sql`SELECT pg_sleep(0.05)`))));
  };
  const auditOf = async (entityId: string) =>
    (await audit.list({ page: 1, limit: 50, entityId })).items.map((entry) => `${entry.actor}:${entry.action}`).sort();

  beforeAll(async () => {
    store = await open();
    audit = createAuditService({ store, clock, ids });
    events = createEventsService({ store, clock, ids });
    marketing = createMarketingService({ store, clock, ids, events, audit });
    postQueue = createPostQueue({ store, marketing });
    await store.run(
      store.db
        .insert(store.t.agents)
        .values([
          agentRow({ id: 'agt_lint', name: 'Lint Hound', sourceUrlKey: 'example.org/lint', changeSeq: 1 }),
          agentRow({ id: 'agt_docs', name: 'Docs Owl', sourceUrlKey: 'example.org/docs', changeSeq: 2 }),
        ]),
    );
    await record('agent.registered', { agent_id: 'agt_lint', name: 'Lint Hound', source_url: 'https://example.org/lint' });
  }, 180_000);

  it('makes drafts from an event and lists them newest first, filtered and paged', async () => {
    const all = await marketing.listPosts({ page: 1, limit: 100, agent_id: 'agt_lint' });
    expect(all.total).toBe(7);
    expect(new Set(all.items.map((post) => post.tone))).toEqual(new Set(TONES));
    expect(all.items.every((post) => post.status === 'draft' && post.created_at === NOW)).toBe(true);
    // One event's posts share its time: ordered by id, the same on both stores.
    expect(all.items.map((post) => post.id)).toEqual(
      all.items
        .map((post) => post.id)
        .sort()
        .reverse(),
    );
    const page = await marketing.listPosts({ page: 2, limit: 3, agent_id: 'agt_lint' });
    expect(page).toMatchObject({ page: 2, limit: 3, total: 7 });
    expect(page.items.map((post) => post.id)).toEqual(all.items.slice(3, 6).map((post) => post.id));
    expect((await marketing.listPosts({ page: 1, limit: 100, tone: 'playful', channel: 'twitter' })).items).toHaveLength(1);
    expect((await marketing.listPosts({ page: 1, limit: 100 }, { publicOnly: true })).total).toBe(0);
    const [first] = all.items;
    expect(await marketing.getPost(first!.id)).toMatchObject({ id: first!.id, version: 1, source_event_type: 'agent.registered' });
    await expect(marketing.getPost('post_missing')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('edits, publishes and archives with version checks and audit entries', async () => {
    const [post] = (await marketing.listPosts({ page: 1, limit: 1, status: 'draft', channel: 'blog' })).items;
    const edited = await marketing.updatePost(post!.id, { title: 'A “better” title' }, { actor: 'mod', expectedVersion: 1 });
    expect(edited).toMatchObject({ title: 'A “better” title', version: 2 });
    await expect(marketing.publishPost(post!.id, 'mod', { expectedVersion: 1 })).rejects.toBeInstanceOf(StaleVersionError);
    expect(await marketing.publishPost(post!.id, 'mod', { expectedVersion: 2 })).toMatchObject({ status: 'published', published_at: NOW });
    expect((await marketing.listPosts({ page: 1, limit: 100 }, { publicOnly: true })).items.map((p) => p.id)).toEqual([post!.id]);
    expect(await marketing.archivePost(post!.id, 'mod')).toMatchObject({ status: 'archived', version: 4 });
    await expect(marketing.updatePost(post!.id, { body: 'Too late' }, { actor: 'mod' })).rejects.toBeInstanceOf(ConflictError);
    expect(await auditOf(post!.id)).toEqual(['mod:marketing_post.archive', 'mod:marketing_post.publish', 'mod:marketing_post.update']);
  });

  it('moderators publishing one post at once: one publishes, the others are told it is published', async () => {
    const [post] = (await marketing.listPosts({ page: 1, limit: 1, status: 'draft', channel: 'newsletter' })).items;
    await warmPool();
    const outcomes = await Promise.allSettled(['mod-a', 'mod-b', 'mod-c', 'mod-d'].map((actor) => marketing.publishPost(post!.id, actor)));
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(ConflictError);
    expect(await marketing.getPost(post!.id)).toMatchObject({ status: 'published', version: 2 });
    expect(await auditOf(post!.id)).toHaveLength(1);
  });

  it('the console queue names the agents and decides each post on its own', async () => {
    const queued = await postQueue.list({ page: 1, limit: 100, status: 'draft' });
    expect(queued.items.every((post) => post.agent_name === 'Lint Hound')).toBe(true);
    const [a, b] = queued.items;
    await marketing.archivePost(b!.id, 'mod');
    expect(await postQueue.decide([a!.id, b!.id, a!.id, 'post_missing'], 'publish', 'mod')).toEqual([
      { id: a!.id, ok: true, status: 'published' },
      { id: b!.id, ok: false, code: 'conflict', error: expect.stringContaining('archived') },
      { id: 'post_missing', ok: false, code: 'not_found', error: expect.any(String) },
    ]);
  });

  it('records A/B results (reports at once all count), completes a test and freezes it', async () => {
    const { items } = await marketing.listAbTests({ page: 1, limit: 10 });
    expect(items).toHaveLength(1);
    const [test] = items;
    const [a, b] = test!.variants;
    await warmPool();
    await Promise.all(Array.from({ length: 4 }, () => marketing.recordAbResult(a!.id, { impressions: 100, conversions: 5 })));
    await marketing.recordAbResult(b!.id, { impressions: 400, conversions: 60 }, { actor: 'mod' });
    await expect(marketing.recordAbResult(b!.id, { impressions: 0, conversions: 400 })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    const evaluated = await marketing.getAbTest(test!.id);
    expect(evaluated.variants.map((v) => [v.label, v.impressions, v.conversions])).toEqual([
      ['A', 400, 20],
      ['B', 400, 60],
    ]);
    expect(evaluated.winner).toBe('B');
    const completed = await marketing.completeAbTest(test!.id, 'mod');
    expect(completed).toMatchObject({ status: 'completed', completed_at: NOW, winner: 'B' });
    await expect(marketing.completeAbTest(test!.id, 'mod')).rejects.toBeInstanceOf(ConflictError);
    await expect(marketing.recordAbResult(a!.id, { impressions: 1, conversions: 0 })).rejects.toBeInstanceOf(ConflictError);
    await expect(marketing.recordAbResult('var_missing', { impressions: 1, conversions: 0 })).rejects.toBeInstanceOf(NotFoundError);
    expect(await auditOf(test!.id)).toEqual(['mod:ab_test.complete', 'mod:ab_test.record_result']);
    expect((await marketing.listAbTests({ page: 1, limit: 10, status: 'running' })).total).toBe(0);
  });

  it('counts posts by tone, channel, status and publishing day', async () => {
    const metrics = await marketing.metrics();
    expect(metrics.tone_distribution).toEqual({ professional: 2, playful: 1, technical: 2, enthusiastic: 2 });
    expect(metrics.channel_distribution).toEqual({ twitter: 4, linkedin: 1, blog: 1, newsletter: 1 });
    expect(metrics.publish_counts.total).toBe(7);
    expect(metrics.publish_counts.by_status).toEqual({ draft: 3, scheduled: 0, published: 2, archived: 2 });
    expect(metrics.publish_counts.by_day).toHaveLength(30);
    // The archived post had been published today too.
    expect(metrics.publish_counts.by_day.at(-1)).toEqual({ date: NOW.slice(0, 10), count: 3 });
    expect(metrics.publish_counts.by_day.slice(0, -1).every((day) => day.count === 0)).toBe(true);
  });

  it("archives a hidden review's posts in the caller's transaction, audited as system", async () => {
    const quoted = await record('review.created', { agent_id: 'agt_docs', review_id: 'rev_spam', rating: 5 });
    const other = await record('review.created', { agent_id: 'agt_docs', review_id: 'rev_fine', rating: 5 });
    const { marketingPosts } = store.t;
    const postsOf = (eventId: string) =>
      store.rows(store.db.select().from(marketingPosts).where(eq(marketingPosts.sourceEventId, eventId)));
    const [published] = await postsOf(quoted.id);
    await marketing.publishPost(published!.id, 'mod');

    await expect(marketing.archivePostsOfReviewInTransaction('rev_spam', { actor: 'mod' })).rejects.toThrow(
      /inside the caller's store\.transaction/,
    );
    // Undone with the caller's transaction.
    await expect(
      store.transaction(async () => {
        expect(await marketing.archivePostsOfReviewInTransaction('rev_spam', { actor: 'mod' })).toBe(TONES.length);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect((await postsOf(quoted.id)).filter((post) => post.status === 'archived')).toEqual([]);

    expect(await store.transaction(() => marketing.archivePostsOfReviewInTransaction('rev_spam', { actor: 'mod' }))).toBe(TONES.length);
    expect((await postsOf(quoted.id)).every((post) => post.status === 'archived')).toBe(true);
    expect((await postsOf(other.id)).every((post) => post.status === 'draft')).toBe(true);
    const entries = await store.rows(
      store.db
        .select()
        .from(store.t.auditLog)
        .where(and(eq(store.t.auditLog.entityId, published!.id), eq(store.t.auditLog.actor, 'system'))),
    );
    expect(entries).toHaveLength(1);
    expect(entries[0]!.after).toMatchObject({ status: 'archived', reason: 'review rev_spam was hidden by mod' });
    // Already archived: nothing more to do.
    expect(await store.transaction(() => marketing.archivePostsOfReviewInTransaction('rev_spam', { actor: 'mod' }))).toBe(0);
  });
});
