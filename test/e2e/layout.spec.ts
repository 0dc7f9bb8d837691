import { expect, test, type Page } from '@playwright/test';
import { expectNoHorizontalOverflow } from './pages/accessibility';
import { createConsoleAccount, type ConsoleAccount } from './pages/console-accounts';
import { DashboardPage } from './pages/dashboard-page';
import { screenshotScreen, signInAsModerator, trpc, uniqueSuffix } from './pages/directory-fixtures';

/**
 * Every screen of the console and the developer dashboard from 1024 px (nothing wider than the window, no
 * actions in a sideways scroll) to 1920 px, with a screenshot at 1024, 1440 and 1920
 * (test-results/screenshots/layout-<screen>-<width>.png and layout-dashboard-<screen>-<width>.png).
 */

const SCREENS: { path: string; ready: string }[] = [
  { path: 'overview', ready: 'page-title' },
  { path: 'submissions', ready: 'submissions-view' },
  { path: 'claims', ready: 'claims-view' },
  { path: 'edit-requests', ready: 'edit-requests-view' },
  { path: 'reports', ready: 'reports-view' },
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

test.describe('the console', () => {
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
});

/** The dashboard's pages: signed out (the mail links with a spent token), then a developer's screens. */
const SIGNED_OUT = [
  'sign-in',
  'sign-up',
  'forgot-password',
  'reset-password?token=layout',
  'verify-email?token=layout-spent',
  'newsletter/confirm?token=layout-spent',
];
const SIGNED_IN = ['keys', 'webhooks', 'claims', 'agents', 'settings'] as const;

test.describe('the developer dashboard', () => {
  let developer: ConsoleAccount;
  let endpointPath: string;

  test.beforeAll(async ({ browser }) => {
    // A developer with a key and an endpoint, so the tables and the endpoint page have something to show.
    developer = createConsoleAccount('Layout Developer');
    const page = await browser.newPage();
    const dashboard = new DashboardPage(page);
    await dashboard.signIn(developer.email, developer.password);
    await expect(page).toHaveURL(/\/dashboard\/keys/);
    await dashboard.createKey(`Layout key ${uniqueSuffix()}`);
    await dashboard.open('webhooks');
    await dashboard.addEndpoint(`http://127.0.0.1:9/layout-dashboard-${uniqueSuffix()}`);
    endpointPath = new URL(page.url()).pathname.replace(/^\/dashboard\//, '');
    expect(endpointPath).toMatch(/^webhooks\/./);
    await page.close();
  });

  async function signedIn(page: Page): Promise<DashboardPage> {
    const dashboard = new DashboardPage(page);
    await dashboard.signIn(developer.email, developer.password);
    await expect(page).toHaveURL(/\/dashboard\/keys/);
    return dashboard;
  }

  async function openDashboard(page: Page, path: string): Promise<void> {
    await page.goto(`/dashboard/${path}`);
    await expect(page.getByTestId('auth-card').or(page.getByTestId('page-title')).first()).toBeVisible();
    await expect(page.locator('.n-data-table-loading-wrapper, .n-skeleton, .n-spin')).toHaveCount(0);
  }

  /** The screenshot's name of a page: its path without the query; the endpoint page is `webhook`. */
  const name = (path: string) => (path === endpointPath ? 'webhook' : path.replace(/\?.*$/, '').replace(/\//g, '-'));

  test('every dashboard page fits 1024 px without sideways scrolling', async ({ page }) => {
    test.setTimeout(90_000);
    await page.setViewportSize({ width: 1024, height: 768 });
    for (const path of SIGNED_OUT) {
      await openDashboard(page, path);
      await expectNoHorizontalOverflow(page, `dashboard ${path}`);
    }
    await signedIn(page);
    for (const path of [...SIGNED_IN, endpointPath]) {
      await openDashboard(page, path);
      await expectNoHorizontalOverflow(page, `dashboard ${path}`);
    }
  });

  for (const width of [1024, 1440, 1920]) {
    test(`dashboard screenshots at ${width} px`, async ({ page }) => {
      test.setTimeout(90_000);
      await page.setViewportSize({ width, height: 900 });
      for (const path of SIGNED_OUT) {
        await openDashboard(page, path);
        await screenshotScreen(page, `layout-dashboard-${name(path)}-${width}`);
      }
      await signedIn(page);
      for (const path of [...SIGNED_IN, endpointPath]) {
        await openDashboard(page, path);
        await screenshotScreen(page, `layout-dashboard-${name(path)}-${width}`);
      }
    });
  }
});
