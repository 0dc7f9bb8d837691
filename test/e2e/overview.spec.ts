import { expect, test } from '@playwright/test';
import {
  collectPageErrors,
  expectChartDrawn,
  importAgents,
  publicApi,
  screenshotPath,
  screenshotScreen,
  signInAsModerator,
  testAgent,
  trpc,
} from './pages/directory-fixtures';
import { mockProcedures, serverError } from './pages/console-api';
import { OverviewDashboard } from './pages/overview-dashboard-page';

interface Overview {
  pending_submissions: number;
  pending_claims: number;
  webhooks: { failing: number; disabled: number; total: number };
  activity: Array<{ date: string; submissions: number; reviews: number; agents: number }>;
}

interface DirectoryStats {
  total_agents: number;
  verified_agents: number;
  by_type: Record<string, number>;
  reviews: { count: number; average_rating: number | null };
}

test.beforeEach(async ({ page }) => {
  await signInAsModerator(page);
});

test('the overview shows the queues, the directory and its activity as charts', async ({ page, request }) => {
  const pageErrors = collectPageErrors(page);
  const overview = new OverviewDashboard(page);
  await overview.goto();
  await overview.expectLoaded();

  const [queues, stats] = await Promise.all([
    trpc<Overview>(request, 'stats.overview'),
    publicApi<DirectoryStats>(request, '/stats').then((response) => response.body),
  ]);
  await overview.expectQueue(overview.submissionsQueue, queues.pending_submissions);
  await overview.expectQueue(overview.claimsQueue, queues.pending_claims);
  await overview.expectQueue(overview.webhooksQueue, queues.webhooks.failing + queues.webhooks.disabled);
  expect(await overview.count(overview.agentsCount)).toBe(stats.total_agents);
  expect(await overview.count(overview.verifiedCount)).toBe(stats.verified_agents);
  expect(await overview.count(overview.reviewsCount)).toBe(stats.reviews.count);

  // Charts: drawn on a canvas, with the same figures as the API (the demo directory has 30 days of activity).
  const activityTotal = queues.activity.reduce((sum, day) => sum + day.submissions + day.reviews + day.agents, 0);
  expect(activityTotal).toBeGreaterThan(0);
  expect(await expectChartDrawn(page, 'chart-activity')).toBe(activityTotal);
  expect(await expectChartDrawn(page, 'chart-by-type')).toBe(stats.total_agents);
  await screenshotScreen(page, '90-overview');
  // ECharts draws under the console's CSP (no eval, canvas only): nothing was refused.
  expect(pageErrors).toEqual([]);

  // Each queue card is a link to the screen that works on the queue; Enter follows it.
  await expect(overview.submissionsQueue).toHaveAttribute('href', '/console/submissions');
  await expect(overview.claimsQueue).toHaveAttribute('href', '/console/claims');
  await expect(overview.webhooksQueue).toHaveAttribute('href', '/console/webhooks');
  await overview.claimsQueue.focus();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/console\/claims$/);
  await page.getByTestId('nav-overview').click();
  await overview.expectLoaded();
});

test('new agents show up in the counts and the activity after a refresh', async ({ page }) => {
  const overview = new OverviewDashboard(page);
  await overview.goto();
  await overview.expectLoaded();
  const agentsBefore = await overview.count(overview.agentsCount);
  const activityBefore = Number(await page.getByTestId('chart-activity').getAttribute('data-points'));

  importAgents([testAgent('Overview One'), testAgent('Overview Two')]);
  await overview.refresh.click();
  await expect.poll(() => overview.count(overview.agentsCount)).toBe(agentsBefore + 2);
  await expect(page.getByTestId('chart-activity')).toHaveAttribute('data-points', String(activityBefore + 2));
});

test('the overview says when it cannot load, and recovers', async ({ page }) => {
  const overview = new OverviewDashboard(page);
  const restore = await mockProcedures(page, { 'stats.overview': serverError });
  await overview.goto();
  await expect(overview.error).toBeVisible();
  await expect(overview.error).toContainText('Something went wrong on our side');
  await page.screenshot({ path: screenshotPath('91-overview-error'), fullPage: true });
  await restore();
  await overview.error.getByRole('button', { name: 'Try again' }).click();
  await overview.expectLoaded();
});

test('the backup card backs up the database now and shows the last backup', async ({ page }) => {
  const overview = new OverviewDashboard(page);
  await overview.goto();
  await overview.expectLoaded();
  const card = page.getByTestId('backup-card');
  await expect(card).toBeVisible();
  const before = await card.textContent();

  await card.getByTestId('backup-now').click();
  const last = card.getByTestId('backup-last');
  await expect(last).toContainText(/Last backup .*: [\d,]+ agents, [\d.]+ MB, agent-directory-\d{8}T\d{6}Z\.sqlite/);
  expect(await card.textContent()).not.toBe(before);
  await expect(card.getByTestId('backup-error')).toHaveCount(0);
});
