import { expect, test, type Page } from '@playwright/test';
import { expectNoHorizontalOverflow } from './pages/accessibility';
import { screenshotScreen, signInAsModerator, trpc, uniqueSuffix } from './pages/directory-fixtures';

/**
 * Every console screen from 1024 px (nothing wider than the window, no actions in a sideways scroll) to
 * 1920 px, with a screenshot at 1024, 1440 and 1920 (test-results/screenshots/layout-<screen>-<width>.png).
 */

const SCREENS: { path: string; ready: string }[] = [
  { path: 'overview', ready: 'page-title' },
  { path: 'submissions', ready: 'submissions-view' },
  { path: 'claims', ready: 'claims-view' },
  { path: 'agents', ready: 'agents-table' },
  { path: 'marketing', ready: 'posts-table' },
  { path: 'webhooks', ready: 'page-title' },
  { path: 'api-keys', ready: 'issue-key' },
  { path: 'newsletter', ready: 'page-title' },
  { path: 'audit-log', ready: 'page-title' },
  { path: 'accounts', ready: 'accounts-ready' },
];

async function open(page: Page, screen: string, ready: string): Promise<void> {
  await page.goto(`/console/${screen}`);
  await expect(page.getByTestId(ready).first()).toBeVisible();
  await expect(page.locator('.n-data-table-loading-wrapper, .n-skeleton')).toHaveCount(0);
}

test.beforeEach(async ({ page }) => signInAsModerator(page));

test('every console screen fits 1024 px without sideways scrolling', async ({ page, request }) => {
  test.setTimeout(90_000);
  // A row in every table that starts empty: an empty table cannot show a row's actions scrolled away.
  await trpc(
    request,
    'webhooks.create',
    { url: `http://127.0.0.1:9/layout-check-${uniqueSuffix()}`, description: 'Layout check' },
    'mutation',
  );
  await trpc(
    request,
    'accounts.create',
    { email: `layout-check-${uniqueSuffix()}@example.com`, name: 'Layout Check', roles: ['moderator'] },
    'mutation',
  );
  await page.setViewportSize({ width: 1024, height: 768 });
  for (const { path, ready } of SCREENS) {
    await open(page, path, ready);
    await expectNoHorizontalOverflow(page, path);
  }
});

for (const width of [1024, 1440, 1920]) {
  test(`screenshots at ${width} px`, async ({ page }) => {
    test.setTimeout(90_000);
    await page.setViewportSize({ width, height: 900 });
    for (const { path, ready } of SCREENS) {
      await open(page, path, ready);
      await screenshotScreen(page, `layout-${path}-${width}`);
    }
  });
}
