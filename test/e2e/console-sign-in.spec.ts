import path from 'node:path';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { OverviewPage } from './pages/overview-page';
import { SignInPage } from './pages/sign-in-page';

const adminToken = process.env.AGENTDIR_E2E_ADMIN_TOKEN!;
const screenshots = path.join('test-results', 'screenshots');

/** Calls the console's tRPC API the way the web build does. */
async function trpcMutation(request: APIRequestContext, procedure: string, input: unknown): Promise<void> {
  const response = await request.post(`/trpc/${procedure}`, { headers: { authorization: `Bearer ${adminToken}` }, data: input });
  expect(response.status()).toBe(200);
}

test('the console asks for the admin token and then shows the overview', async ({ page, request }) => {
  // Something to count besides the demo directory.
  await trpcMutation(request, 'keys.create', { name: 'e2e key' });
  const agentsTotal: number = (await (await request.get('/api/v1/agents?limit=1')).json()).total;

  // A CSP violation or a script error shows up as a console error.
  const pageErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));

  const signIn = new SignInPage(page);
  const overview = new OverviewPage(page);

  await overview.goto();
  await signIn.expectShown();
  await page.screenshot({ path: path.join(screenshots, '01-sign-in.png'), fullPage: true });

  await signIn.signIn('not-the-admin-token');
  await expect(signIn.error).toContainText('not accepted');
  await signIn.expectShown();
  await page.screenshot({ path: path.join(screenshots, '02-sign-in-wrong-token.png'), fullPage: true });

  await signIn.signIn(adminToken);
  await overview.expectLoaded();
  expect(await overview.count(overview.agentsCount)).toBe(agentsTotal);
  expect(await overview.count(overview.keysCount)).toBe(1);
  await expect(page.getByTestId('actor')).toHaveText('admin-token');
  await page.screenshot({ path: path.join(screenshots, '03-overview.png'), fullPage: true });
  // The wrong token's 401 is logged by the browser as a failed request; nothing else may be.
  expect(pageErrors.filter((text) => !/status of 401/.test(text))).toEqual([]);

  // The token lasts for the tab: a reload stays signed in, signing out does not.
  await page.reload();
  await overview.expectLoaded();
  await page.getByTestId('sign-out').click();
  await signIn.expectShown();
});

test('a deep link to a screen survives signing in', async ({ page }) => {
  const signIn = new SignInPage(page);
  await page.goto('/console/webhooks?endpoint=whk_deeplink');
  await signIn.expectShown();
  await signIn.signIn(adminToken);
  // Back where the link pointed, query included, on the built screen.
  await expect(page).toHaveURL(/\/console\/webhooks\?endpoint=whk_deeplink$/);
  await expect(page.getByTestId('page-title')).toHaveText('Webhooks');
  await expect(page.getByTestId('endpoint-missing')).toContainText('whk_deeplink');
  await expect(page.getByTestId('not-built')).toHaveCount(0);
  await page.screenshot({ path: path.join(screenshots, '04-deep-link-after-sign-in.png'), fullPage: true });
  await page.getByTestId('nav-overview').click();
  await new OverviewPage(page).expectLoaded();
});
