import { expect, test } from '@playwright/test';
import {
  auditOf,
  collectPageErrors,
  expectChartDrawn,
  importAgents,
  publicApi,
  screenshotPath,
  screenshotScreen,
  signInAsModerator,
  testAgent,
  trpc,
  uniqueSuffix,
} from './pages/directory-fixtures';
import { mockProcedures, serverError, settled } from './pages/console-api';
import { MarketingPage } from './pages/marketing-page';

interface Post {
  id: string;
  title: string;
  body: string;
  tone: string;
  status: string;
  channel: string;
  agent_id?: string;
  published_at?: string;
}

interface AbTest {
  id: string;
  name: string;
  status: string;
  variants: Array<{ label: string; impressions: number }>;
  winner?: string;
  p_value?: number;
}

interface Metrics {
  tone_distribution: Record<string, number>;
  channel_distribution: Record<string, number>;
  publish_counts: { total: number; by_status: Record<string, number>; by_day: Array<{ date: string; count: number }> };
}

const suffix = uniqueSuffix();
// Registered with events: the directory generates this agent's posts (every tone and channel) and an A/B test.
const launched = testAgent('Launched', suffix);

// Long flows (many screens, API checks, toasts to wait out) on a machine shared with other suites.
test.describe.configure({ timeout: 60_000 });

test.beforeAll(() => {
  importAgents([launched], { emitEvents: true });
});

test.beforeEach(async ({ page }) => {
  await signInAsModerator(page);
});

/** This agent's posts as the console sees them (drafts never reach the public API). */
async function postsOf(request: Parameters<typeof publicApi>[0], status?: string): Promise<Post[]> {
  return (await trpc<{ posts: Post[] }>(request, 'marketing.listPosts', { agent_id: launched.id, limit: 100, ...(status && { status }) }))
    .posts;
}
const draftsOf = (request: Parameters<typeof publicApi>[0]) => postsOf(request, 'draft');

test('filter posts, edit one and publish it; the public feed shows it', async ({ page, request }) => {
  const drafts = await draftsOf(request);
  const post = drafts.find((candidate) => candidate.channel === 'blog') ?? drafts[0]!;

  const marketing = new MarketingPage(page);
  await marketing.goto();
  await marketing.expectPostsLoaded();
  await expect(marketing.postRows.first()).toBeVisible();
  await screenshotScreen(page, '50-marketing-posts');

  // Server-side filters: drafts of the post's tone and channel, newest first, so the post is on the first page.
  await marketing.filter('status', 'Draft');
  await marketing.filter('tone', post.tone.charAt(0).toUpperCase() + post.tone.slice(1));
  await marketing.filter('channel', 'Blog');
  for (const status of await page.getByTestId('post-status').allInnerTexts()) expect(status).toBe('Draft');
  await marketing.postRow(post.id).click();
  await marketing.expectDrawerFor(post.id);
  await expect(marketing.drawerTitle).toHaveText(post.title);
  await settled(page);
  await page.screenshot({ path: screenshotPath('51-post-drawer') });

  // An empty title is caught before anything is sent.
  await marketing.field('Title').fill(' ');
  await marketing.save.click();
  await expect(marketing.drawer.getByText('Title is required')).toBeVisible();

  const title = `Meet ${launched.name}: edited for the newsletter`;
  await marketing.field('Title').fill(title);
  await marketing.field('Body').fill(`${launched.name} is now in the directory. Edited by a moderator before publishing.`);
  await marketing.choose('tone', 'Technical');
  await marketing.choose('channel', 'Newsletter');
  // Publishing waits until the edit is saved or discarded.
  await expect(marketing.publish).toBeDisabled();
  await marketing.save.click();
  await expect(marketing.message('Post saved')).toBeVisible();
  await expect(marketing.drawerTitle).toHaveText(title);
  await expect(marketing.message('Post saved')).toBeHidden();

  await marketing.publish.click();
  await expect(marketing.popconfirm()).toContainText('Publish this post on Newsletter?');
  await settled(page);
  await page.screenshot({ path: screenshotPath('52-post-publish-confirm') });
  await marketing.confirmButton('Publish').click();
  await expect(marketing.statusTag).toHaveText('Published');
  await expect(marketing.publish).toBeDisabled();
  await expect(marketing.postRow(post.id).getByTestId('post-status')).toHaveText('Published');

  const published = await publicApi<{ posts: Post[] }>(request, '/marketing/posts?status=published&limit=100');
  expect(published.status).toBe(200);
  expect(published.body.posts.find((candidate) => candidate.id === post.id)).toMatchObject({
    title,
    tone: 'technical',
    channel: 'newsletter',
    status: 'published',
  });

  const actions = (await auditOf(request, post.id)).map((entry) => `${entry.action} by ${entry.actor}`);
  expect(actions).toEqual(['marketing_post.publish by admin-token', 'marketing_post.update by admin-token']);
});

test('archive a post after confirming; archived posts are read-only', async ({ page, request }) => {
  const [post] = await draftsOf(request);
  const marketing = new MarketingPage(page);
  await marketing.goto(`?post=${post!.id}`);
  await marketing.expectDrawerFor(post!.id);

  await marketing.archive.click();
  await expect(marketing.popconfirm()).toContainText('Archive this post?');
  await settled(page);
  await page.screenshot({ path: screenshotPath('53-post-archive-confirm') });
  await marketing.confirmButton('Archive').click();
  await expect(marketing.statusTag).toHaveText('Archived');
  await expect(marketing.drawer).toContainText('Archived posts are final');
  await expect(marketing.field('Title')).toBeDisabled();
  await expect(marketing.archive).toBeHidden();
  await expect(marketing.message('Post archived')).toBeHidden();
  await settled(page);
  await page.screenshot({ path: screenshotPath('54-post-archived') });

  expect((await postsOf(request, 'archived')).map((candidate) => candidate.id)).toContain(post!.id);
  // A draft archived unpublished never reaches the public API.
  const archived = await publicApi<{ posts: Post[] }>(request, `/marketing/posts?status=archived&agent_id=${launched.id}&limit=100`);
  expect(archived.body.posts.map((candidate) => candidate.id)).not.toContain(post!.id);
  expect((await auditOf(request, post!.id))[0]).toMatchObject({ action: 'marketing_post.archive', actor: 'admin-token' });
});

test('tick drafts and publish them at once; each row names its agent', async ({ page, request }) => {
  const drafts = (await draftsOf(request)).slice(0, 2);
  expect(drafts).toHaveLength(2);
  const marketing = new MarketingPage(page);
  await marketing.goto();
  await marketing.filter('status', 'Draft');
  for (const draft of drafts) {
    await expect(marketing.postRow(draft.id).getByTestId('post-agent')).toHaveText(launched.name);
    // The checkbox ticks the row; it does not open the post.
    await marketing.postRow(draft.id).locator('.n-checkbox').click();
  }
  await expect(marketing.drawer).toBeHidden();
  const bar = page.getByTestId('posts-bulk-bar');
  await expect(bar).toContainText('2 selected');
  await expect(marketing.postRow(drafts[0]!.id).locator('.n-checkbox')).toHaveAttribute('aria-label', `Select ${drafts[0]!.title}`);
  await settled(page);
  await page.screenshot({ path: screenshotPath('55-posts-bulk-selected') });
  await page.getByTestId('posts-bulk-publish').click();
  await expect(marketing.message('Published 2 posts')).toBeVisible();
  await expect(bar).toBeHidden();

  const published = await publicApi<{ posts: Post[] }>(request, `/marketing/posts?status=published&agent_id=${launched.id}&limit=100`);
  expect(published.body.posts.map((post) => post.id)).toEqual(expect.arrayContaining(drafts.map((draft) => draft.id)));
  expect((await auditOf(request, drafts[1]!.id))[0]).toMatchObject({ action: 'marketing_post.publish', actor: 'admin-token' });
});

test('an edit over someone else’s change is refused with a warning', async ({ page, request }) => {
  const [post] = (await draftsOf(request)).slice(-1);
  const marketing = new MarketingPage(page);
  await marketing.goto(`?post=${post!.id}`);
  await marketing.expectDrawerFor(post!.id);

  const current = await trpc<{ version: number }>(request, 'marketing.getPost', { id: post!.id });
  await trpc(
    request,
    'marketing.updatePost',
    { id: post!.id, patch: { title: 'Retitled by a colleague' }, expectedVersion: current.version },
    'mutation',
  );

  await marketing.field('Body').fill('My own edit, made on an old copy.');
  await marketing.save.click();
  await expect(marketing.stale).toBeVisible();
  await expect(marketing.publish).toBeDisabled();
  await settled(page);
  await page.screenshot({ path: screenshotPath('55-post-stale-warning') });

  await marketing.staleReload.click();
  await expect(marketing.stale).toBeHidden();
  await expect(marketing.field('Title')).toHaveValue('Retitled by a colleague');
  const after = await postsOf(request);
  expect(after.find((candidate) => candidate.id === post!.id)?.body).not.toBe('My own edit, made on an old copy.');
});

test('metrics are drawn as charts from the stored posts', async ({ page, request }) => {
  const pageErrors = collectPageErrors(page);
  const metrics = (await publicApi<Metrics>(request, '/marketing/metrics')).body;
  const marketing = new MarketingPage(page);
  await marketing.goto('?tab=metrics');
  await expect(marketing.metrics).toBeVisible();

  expect(await expectChartDrawn(page, 'chart-tones')).toBe(metrics.publish_counts.total);
  expect(await expectChartDrawn(page, 'chart-statuses')).toBe(metrics.publish_counts.total);
  expect(await expectChartDrawn(page, 'chart-channels')).toBe(metrics.publish_counts.total);
  const publishedIn30Days = metrics.publish_counts.by_day.reduce((sum, day) => sum + day.count, 0);
  expect(await expectChartDrawn(page, 'chart-publish-per-day')).toBe(publishedIn30Days);
  await expect(page.getByTestId('metrics-total')).toContainText(metrics.publish_counts.total.toLocaleString('en-US'));
  await screenshotScreen(page, '56-marketing-metrics');
  expect(pageErrors).toEqual([]);
});

test('A/B tests show rates with intervals and p-values, and a running test can be completed', async ({ page, request }) => {
  const tests = (await publicApi<{ ab_tests: AbTest[] }>(request, '/marketing/ab-tests?limit=100')).body.ab_tests;
  const mine = tests.find((candidate) => candidate.name.startsWith(launched.name))!;
  expect(mine, 'the launched agent has an A/B test').toBeTruthy();
  // The console's first page (newest 20) is the public API's first page.
  const decided = tests.slice(0, 20).find((candidate) => candidate.winner);

  const marketing = new MarketingPage(page);
  await marketing.goto('?tab=ab-tests');
  await marketing.expectAbTestsLoaded();
  if (decided) {
    const row = marketing.abRow(decided.id);
    await expect(row.getByTestId('ab-winner')).toHaveText(`${decided.winner} wins`);
    await expect(row.getByTestId('ab-variant-rate').first()).toContainText('%');
  }
  await screenshotScreen(page, '57-ab-tests');

  await page.getByTestId('ab-status-filter').getByText('Running', { exact: true }).click();
  await marketing.expectAbTestsLoaded();
  const row = marketing.abRow(mine.id);
  await expect(row).toBeVisible();
  await expect(row.getByTestId('ab-variant')).toHaveCount(2);
  await expect(row.getByTestId('ab-p-value')).toHaveText('—');
  await expect(row.getByTestId('ab-winner')).toHaveText('Waiting for impressions');

  await row.getByTestId('ab-complete').click();
  await expect(marketing.popconfirm()).toContainText('Complete this test?');
  await settled(page);
  await page.screenshot({ path: screenshotPath('58-ab-complete-confirm') });
  await marketing.confirmButton('Complete').click();
  await expect(marketing.message('Test completed')).toBeVisible();
  await expect(row.getByTestId('ab-status')).toHaveText('Completed');

  const after = (await publicApi<{ ab_tests: AbTest[] }>(request, '/marketing/ab-tests?limit=100')).body.ab_tests;
  expect(after.find((candidate) => candidate.id === mine.id)?.status).toBe('completed');
  expect((await auditOf(request, mine.id))[0]).toMatchObject({ action: 'ab_test.complete', actor: 'admin-token' });
});

test('empty and error states', async ({ page }) => {
  const marketing = new MarketingPage(page);
  const restorePosts = await mockProcedures(page, { 'marketing.listPosts': { data: { posts: [], page: 1, limit: 20, total: 0 } } });
  await marketing.goto();
  await marketing.expectPostsLoaded();
  await expect(marketing.postsEmpty).toBeVisible();
  await page.screenshot({ path: screenshotPath('59-marketing-posts-empty'), fullPage: true });
  await restorePosts();

  const restoreError = await mockProcedures(page, { 'marketing.listPosts': serverError, 'marketing.metrics': serverError });
  await page.reload();
  await expect(marketing.postsError).toContainText('Something went wrong on our side');
  await marketing.tab('Metrics').click();
  await expect(marketing.metricsError).toBeVisible();
  await page.screenshot({ path: screenshotPath('59-marketing-metrics-error'), fullPage: true });
  await restoreError();
  await marketing.metricsError.getByRole('button', { name: 'Try again' }).click();
  await expect(page.getByTestId('chart-tones').locator('canvas')).toBeVisible();
});
