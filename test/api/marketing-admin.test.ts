import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { trpcClient } from '../helpers/trpc';

/** marketing.* over real HTTP with the admin token, checked against the public marketing API and the audit log. */
const ADMIN_TOKEN = 'test-admin-token-marketing-0123456789';

let server: TestServer;
let agentId: string;

beforeAll(async () => {
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
  );
  // A registration makes drafts in every tone and channel, and an A/B test between two of them.
  agentId = (await server.services.agents.edits.create(agentInput({ name: 'Marketed Agent' }))).id;
});
afterAll(() => server.close());

const { query, mutation } = trpcClient(() => server.origin, ADMIN_TOKEN);

interface PostSummary {
  id: string;
  status: string;
  tone: string;
  channel: string;
}

const draftsOf = async (filter: Record<string, string> = {}): Promise<PostSummary[]> =>
  (await query('marketing.listPosts', { agent_id: agentId, status: 'draft', limit: 100, ...filter })).data.posts;

describe('marketing posts', () => {
  it('filters by status, tone and channel, server-side, with paging', async () => {
    const all = await query('marketing.listPosts', { agent_id: agentId, limit: 100 });
    expect(all.data.total).toBeGreaterThan(4);
    const { tone, channel } = all.data.posts[0] as PostSummary;
    const narrowed = await query('marketing.listPosts', { agent_id: agentId, tone, channel });
    expect(narrowed.data.posts.length).toBeGreaterThan(0);
    expect(narrowed.data.total).toBeLessThan(all.data.total);
    for (const post of narrowed.data.posts) expect(post).toMatchObject({ tone, channel });
    const page = await query('marketing.listPosts', { agent_id: agentId, limit: 2, page: 2 });
    expect(page.data).toMatchObject({ page: 2, limit: 2, total: all.data.total });
    expect(page.data.posts).toHaveLength(2);
    expect((await query('marketing.listPosts', { tone: 'sarcastic' })).error.data.code).toBe('validation_failed');
  });

  it('edits with expectedVersion, publishes, archives; the public API and the audit log follow', async () => {
    const [draft] = await draftsOf({ channel: 'blog' });
    const current = (await query('marketing.getPost', { id: draft!.id })).data;
    expect(current).toMatchObject({ id: draft!.id, version: 1, source_event_type: 'agent.registered' });

    const edited = await mutation('marketing.updatePost', {
      id: draft!.id,
      patch: { title: 'A better title', body: 'A better body', tone: 'technical', channel: 'newsletter' },
      expectedVersion: 1,
    });
    expect(edited.status).toBe(200);
    expect(edited.data).toMatchObject({ title: 'A better title', tone: 'technical', channel: 'newsletter', version: 2 });

    const stale = await mutation('marketing.publishPost', { id: draft!.id, expectedVersion: 1 });
    expect(stale.status).toBe(409);
    expect(stale.error.data.code).toBe('stale_version');

    const published = await mutation('marketing.publishPost', { id: draft!.id, expectedVersion: 2 });
    expect(published.data).toMatchObject({ status: 'published', version: 3 });
    expect(published.data.published_at).toMatch(/Z$/);
    const publicPosts = await json(await server.api(`/marketing/posts?status=published&agent_id=${agentId}&limit=100`));
    expect(publicPosts.posts).toContainEqual(expect.objectContaining({ id: draft!.id, title: 'A better title', status: 'published' }));

    const again = await mutation('marketing.publishPost', { id: draft!.id });
    expect(again.status).toBe(409);
    expect(again.error.data.code).toBe('conflict');

    const archived = await mutation('marketing.archivePost', { id: draft!.id, expectedVersion: 3 });
    expect(archived.data.status).toBe('archived');
    expect((await mutation('marketing.updatePost', { id: draft!.id, patch: { title: 'Too late' } })).status).toBe(409);

    const audit = (await query('audit.list', { entityId: draft!.id })).data.entries;
    expect(audit.map((entry: { action: string }) => entry.action)).toEqual([
      'marketing_post.archive',
      'marketing_post.publish',
      'marketing_post.update',
    ]);
  });

  it('refuses an empty title and unknown fields', async () => {
    const [draft] = await draftsOf();
    expect((await mutation('marketing.updatePost', { id: draft!.id, patch: { title: '  ' } })).error.data.code).toBe('validation_failed');
    expect((await mutation('marketing.updatePost', { id: draft!.id, patch: { status: 'published' } })).status).toBe(400);
  });
});

describe('the console list and bulk decisions', () => {
  it('names the agent of each post', async () => {
    const posts = (await query('marketing.listPosts', { agent_id: agentId, limit: 5 })).data.posts;
    expect(posts.length).toBeGreaterThan(0);
    for (const post of posts) expect(post).toMatchObject({ agent_id: agentId, agent_name: 'Marketed Agent' });
    // The public API keeps to its schema.
    const published = await json(await server.api('/marketing/posts?limit=5'));
    for (const post of published.posts) expect(post.agent_name).toBeUndefined();
  });

  it('publishes several drafts at once, each through the one write path; a post that cannot be decided fails alone', async () => {
    const other = (await server.services.agents.edits.create(agentInput({ name: 'Bulk Marketed Agent' }))).id;
    const drafts = (await query('marketing.listPosts', { agent_id: other, status: 'draft', limit: 100 })).data.posts as PostSummary[];
    expect(drafts.length).toBeGreaterThanOrEqual(3);
    const [first, second, third] = drafts;
    // Someone archived the third meanwhile: it can no longer be published.
    expect((await mutation('marketing.archivePost', { id: third!.id })).status).toBe(200);

    const answer = await mutation('marketing.decidePosts', { ids: [first!.id, second!.id, third!.id], decision: 'publish' });
    expect(answer.status).toBe(200);
    expect(answer.data.results).toEqual([
      { id: first!.id, ok: true, status: 'published' },
      { id: second!.id, ok: true, status: 'published' },
      { id: third!.id, ok: false, code: 'conflict', error: expect.stringContaining('archived') },
    ]);
    const publicIds = (await json(await server.api('/marketing/posts?limit=100'))).posts.map((post: { id: string }) => post.id);
    expect(publicIds).toEqual(expect.arrayContaining([first!.id, second!.id]));
    const audit = (await query('audit.list', { entityId: first!.id })).data.entries as Array<{ action: string; actor: string }>;
    expect(audit.map((entry) => `${entry.actor} ${entry.action}`)).toContain('admin-token marketing_post.publish');

    const archived = await mutation('marketing.decidePosts', { ids: [first!.id, second!.id], decision: 'archive' });
    expect(archived.data.results.map((result: { status: string }) => result.status)).toEqual(['archived', 'archived']);
  });

  it('refuses an empty list, more than 100 ids and an unknown decision, deciding nothing', async () => {
    expect((await mutation('marketing.decidePosts', { ids: [], decision: 'publish' })).status).toBe(400);
    const many = Array.from({ length: 101 }, (_, i) => `post_${i}`);
    expect((await mutation('marketing.decidePosts', { ids: many, decision: 'publish' })).status).toBe(400);
    expect((await mutation('marketing.decidePosts', { ids: ['x'], decision: 'delete' })).status).toBe(400);
    const unknown = await mutation('marketing.decidePosts', { ids: ['post_unknown'], decision: 'archive' });
    expect(unknown.data.results).toEqual([{ id: 'post_unknown', ok: false, code: 'not_found', error: expect.any(String) }]);
  });
});

describe('A/B tests and metrics', () => {
  it('lists tests with rates, intervals and p-values, and completes one', async () => {
    const list = await query('marketing.listAbTests', { status: 'running' });
    const test = list.data.ab_tests.find((candidate: { name: string }) => candidate.name.startsWith('Marketed Agent'));
    expect(test.variants).toHaveLength(2);
    const [a, b] = test.variants;
    await server.services.marketing.recordAbResult(a.id, { impressions: 400, conversions: 20 });
    await server.services.marketing.recordAbResult(b.id, { impressions: 400, conversions: 60 });

    const evaluated = (await query('marketing.getAbTest', { id: test.id })).data;
    expect(evaluated.winner).toBe('B');
    expect(evaluated.p_value).toBeLessThan(0.001);
    expect(evaluated.variants[1].rate).toBeCloseTo(0.15);
    expect(evaluated.variants[1].interval.low).toBeLessThan(0.15);
    expect(evaluated.variants[1].interval.high).toBeGreaterThan(0.15);

    const completed = await mutation('marketing.completeAbTest', { id: test.id });
    expect(completed.data).toMatchObject({ status: 'completed', winner: 'B' });
    expect((await mutation('marketing.completeAbTest', { id: test.id })).error.data.code).toBe('conflict');
    const audit = (await query('audit.list', { entityId: test.id })).data.entries;
    expect(audit[0]).toMatchObject({ action: 'ab_test.complete', actor: 'admin-token' });
  });

  it('reports metrics like the public API', async () => {
    const metrics = (await query('marketing.metrics')).data;
    expect(metrics).toEqual(await json(await server.api('/marketing/metrics')));
    expect(metrics.publish_counts.by_day).toHaveLength(30);
    expect(Object.values(metrics.tone_distribution).reduce((sum: number, n) => sum + (n as number), 0)).toBe(metrics.publish_counts.total);
  });
});
