import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { DashboardPage, linkFromMail } from './pages/dashboard-page';

const dataDir = process.env.AGENTDIR_E2E_DATA_DIR!;
const screenshots = path.join('test-results', 'screenshots');

/** Signs a new developer up through the dashboard, follows the mail's link, signs in; returns the address. */
async function signUpAndSignIn(page: Page, dashboard: DashboardPage, shots = false): Promise<string> {
  const email = `dev-${Date.now()}@example.com`;
  const password = 'a long passphrase for e2e';

  await dashboard.signUp({ name: 'Grace Hopper', email, password });
  if (shots) await page.screenshot({ path: path.join(screenshots, 'dashboard-01-signed-up.png'), fullPage: true });

  // Unverified: signing in is refused with a clear message.
  await dashboard.signIn(email, password);
  await expect(page.getByTestId('sign-in-error')).toContainText('Verify your e-mail');

  const link = await linkFromMail(dataDir, email, '/dashboard/verify-email');
  await dashboard.verifyWith(link);
  await expect(page.getByTestId('sign-in-notice')).toContainText('verified');
  await dashboard.signIn(email, password);
  await expect(page).toHaveURL(/\/dashboard\/keys/);
  await expect(dashboard.accountName).toHaveText('Grace Hopper');

  // The link is single-use.
  await page.goto(link);
  await expect(page.getByTestId('verify-failed')).toBeVisible();
  return email;
}

test('a developer signs up, verifies the address from the mail, signs in and out', async ({ page }) => {
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  const dashboard = new DashboardPage(page);

  const email = await signUpAndSignIn(page, dashboard, true);
  await page.goto('/dashboard/settings');
  await expect(page.getByTestId('settings-email')).toHaveText(email);
  await page.screenshot({ path: path.join(screenshots, 'dashboard-02-settings.png'), fullPage: true });

  await dashboard.signOut();
  // Signed out: the screens send the visitor to sign in, and a wrong password is refused.
  await page.goto('/dashboard/webhooks');
  await expect(page).toHaveURL(/\/dashboard\/sign-in/);
  await dashboard.signIn(email, 'not the password at all');
  await expect(page.getByTestId('sign-in-error')).toContainText('do not match');
  expect(pageErrors).toEqual([]);
});
