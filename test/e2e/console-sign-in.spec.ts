import path from 'node:path';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { AccountsPage } from './pages/accounts-page';
import { AuditLogPage } from './pages/audit-log-page';
import { ADMIN_SCREENS, createConsoleAccount, MODERATOR_SCREENS, navEntries } from './pages/console-accounts';
import { uniqueSuffix } from './pages/directory-fixtures';
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
  // E-mail and password come first; the token is the second tab.
  await expect(signIn.accountTab).toHaveAttribute('aria-selected', 'true');
  await expect(signIn.emailInput).toBeVisible();
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
  await expect(page.getByTestId('actor-role')).toHaveText('admin');
  await page.screenshot({ path: path.join(screenshots, '03-overview.png'), fullPage: true });
  // The wrong token's 401 (and the first probe for a session) is logged by the browser as a failed request; nothing else may be.
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

test('a moderator signs in with e-mail and password, sees the moderator screens only, and signs out', async ({ page }) => {
  const moderator = createConsoleAccount('Grace Moderator', 'moderator');
  const signIn = new SignInPage(page);
  const overview = new OverviewPage(page);

  await overview.goto();
  await signIn.expectShown();
  await signIn.signInWithAccount(moderator.email, moderator.password);
  await overview.expectLoaded();
  await expect(page.getByTestId('actor')).toHaveText(moderator.name);
  await expect(page.getByTestId('actor-email')).toHaveText(moderator.email);
  await expect(page.getByTestId('actor-role')).toHaveText('moderator');
  expect(await navEntries(page)).toEqual(MODERATOR_SCREENS);
  // Keys and webhooks are an admin's: the moderator's overview leaves their cards out instead of failing.
  await expect(page.getByTestId('count-keys')).toHaveCount(0);
  await expect(page.getByTestId('overview-error')).toHaveCount(0);
  await page.screenshot({ path: path.join(screenshots, '05-moderator-overview.png'), fullPage: true });

  // Every moderator screen loads (none asks the server for an admin's data).
  for (const [screen, ready] of [
    ['submissions', 'submissions-view'],
    ['claims', 'claims-view'],
    ['edit-requests', 'edit-requests-view'],
    ['reports', 'reports-view'],
    ['agents', 'agents-table'],
    ['marketing', 'posts-table'],
  ] as const) {
    await page.getByTestId(`nav-${screen}`).click();
    await expect(page.getByTestId(ready)).toBeVisible();
    await expect(page.locator('.n-result--error-status, [data-testid$="-error"]')).toHaveCount(0);
  }
  await page.getByTestId('nav-overview').click();
  await overview.expectLoaded();
  await page.setViewportSize({ width: 1024, height: 768 });
  await page.screenshot({ path: path.join(screenshots, '05b-moderator-overview-1024.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  // The session is a cookie: a reload stays signed in.
  await page.reload();
  await overview.expectLoaded();
  await expect(page.getByTestId('actor-role')).toHaveText('moderator');

  // An admin's screen by URL: a clear "not allowed", the sidebar still there.
  for (const screen of ['api-keys', 'audit-log']) {
    await page.goto(`/console/${screen}`);
    await expect(page.getByTestId('not-allowed')).toBeVisible();
    await expect(page.getByTestId('not-allowed')).toContainText('for admins');
  }
  await page.screenshot({ path: path.join(screenshots, '06-moderator-not-allowed.png'), fullPage: true });
  await page.getByTestId('not-allowed-back').click();
  await overview.expectLoaded();

  await page.getByTestId('sign-out').click();
  await signIn.expectShown();
  // Signed out on the server too: the cookie no longer opens the console.
  await page.goto('/console/claims');
  await signIn.expectShown();
  expect((await page.request.get('/trpc/session.me')).status()).toBe(401);
});

test('an admin sees every screen, and the audit log names the account', async ({ page }) => {
  const admin = createConsoleAccount('Ada Admin', 'admin');
  const signIn = new SignInPage(page);
  await page.goto('/console/api-keys');
  await signIn.expectShown();
  await signIn.signInWithAccount(admin.email, admin.password);
  // Back where the link pointed.
  await expect(page).toHaveURL(/\/console\/api-keys$/);
  await expect(page.getByTestId('page-title')).toHaveText('API keys');
  await expect(page.getByTestId('not-allowed')).toHaveCount(0);
  await expect(page.getByTestId('actor-role')).toHaveText('admin');
  expect(await navEntries(page)).toEqual([...ADMIN_SCREENS, 'accounts']);
  await page.screenshot({ path: path.join(screenshots, '07-admin-api-keys.png'), fullPage: true });
  await page.getByTestId('sign-out').click();
  await signIn.expectShown();
});

test('a wrong password and an account without a role get a clear message, and no session', async ({ page }) => {
  const developer = createConsoleAccount('Dev Without Role');
  const signIn = new SignInPage(page);
  await page.goto('/console/sign-in');
  await signIn.expectShown();

  await signIn.signInWithAccount(developer.email, 'not the password at all');
  await expect(signIn.error).toHaveText('That e-mail address and password do not match. Check both and try again.');
  await page.screenshot({ path: path.join(screenshots, '08-sign-in-wrong-password.png'), fullPage: true });
  // An unknown address reads exactly the same.
  await signIn.signInWithAccount(`nobody.${Date.now()}@console.example`, 'not the password at all');
  await expect(signIn.error).toHaveText('That e-mail address and password do not match. Check both and try again.');

  await signIn.signInWithAccount(developer.email, developer.password);
  await expect(signIn.error).toContainText('no access to the moderator console');
  await signIn.expectShown();
  // The account's session was ended again, so nothing is left open.
  expect((await page.request.get('/trpc/session.me')).status()).toBe(401);
  await page.screenshot({ path: path.join(screenshots, '09-sign-in-no-role.png'), fullPage: true });
});

test('an admin makes an account a moderator, disables and enables it on the Accounts screen, audited with the admin', async ({
  page,
  browser,
}) => {
  test.setTimeout(60_000);
  const admin = createConsoleAccount('Ada Admin', 'admin');
  const colleague = createConsoleAccount('Colin Colleague');
  const signIn = new SignInPage(page);
  const accounts = new AccountsPage(page);

  await page.goto('/console/sign-in');
  await signIn.signInWithAccount(admin.email, admin.password);
  await new OverviewPage(page).expectLoaded();
  await accounts.open();
  await accounts.searchFor(colleague.email, 1);
  await expect(accounts.rows).toHaveCount(1);
  await expect(accounts.row(colleague.email).getByTestId('account-name')).toHaveText(colleague.name);
  await expect(accounts.roleBox(colleague.email, 'moderator')).not.toHaveClass(/n-checkbox--checked/);

  // Grant: the colleague can now sign in to the console, as a moderator.
  await accounts.toggleRole(colleague.email, 'moderator');
  await expect(accounts.roleBox(colleague.email, 'moderator')).toHaveClass(/n-checkbox--checked/);
  await expect(page.getByText(`${colleague.email} is now a moderator`)).toBeVisible();
  await page.screenshot({ path: path.join(screenshots, '10-accounts-granted.png'), fullPage: true });

  const colleagueContext = await browser.newContext();
  const colleaguePage = await colleagueContext.newPage();
  const colleagueSignIn = new SignInPage(colleaguePage);
  await colleaguePage.goto('/console/sign-in');
  await colleagueSignIn.signInWithAccount(colleague.email, colleague.password);
  await new OverviewPage(colleaguePage).expectLoaded();
  expect(await navEntries(colleaguePage)).toEqual(MODERATOR_SCREENS);

  // Disable: the colleague's session ends at once, and signing in again is refused with a clear message.
  await accounts.disable(colleague.email);
  await page.screenshot({ path: path.join(screenshots, '11-accounts-disabled.png'), fullPage: true });
  await colleaguePage.goto('/console/claims');
  await colleagueSignIn.expectShown();
  await colleagueSignIn.signInWithAccount(colleague.email, colleague.password);
  await expect(colleagueSignIn.error).toHaveText('This account has been disabled. Ask an admin of this directory.');

  await accounts.enable(colleague.email);
  await colleagueSignIn.signInWithAccount(colleague.email, colleague.password);
  // Back on the screen the ended session was on.
  await expect(colleaguePage).toHaveURL(/\/console\/claims$/);
  await expect(colleaguePage.getByTestId('page-title')).toHaveText('Claims');
  await colleagueContext.close();

  // The admin cannot lock themselves out from here.
  await accounts.searchFor(admin.email, 1);
  await expect(accounts.roleBox(admin.email, 'admin')).toHaveClass(/n-checkbox--disabled/);
  await expect(accounts.row(admin.email).getByTestId('disable-account')).toBeDisabled();

  // Every change is in the audit log under the admin's e-mail.
  await accounts.searchFor(colleague.email, 1);
  await accounts.row(colleague.email).getByTestId('account-history').click();
  const audit = new AuditLogPage(page);
  await audit.expectSettled();
  await expect(audit.column('audit-action')).toHaveText(['account.enable', 'account.disable', 'account.roles', 'account.create']);
  await expect(audit.column('audit-actor')).toHaveText([admin.email, admin.email, admin.email, 'cli']);
  await page.screenshot({ path: path.join(screenshots, '12-audit-log-account-actor.png'), fullPage: true });
});

test('the Accounts screen searches and pages on the server', async ({ page, request }) => {
  const suffix = uniqueSuffix();
  for (let index = 1; index <= 23; index++) {
    const response = await request.post('/trpc/accounts.create', {
      headers: { authorization: `Bearer ${adminToken}` },
      data: {
        email: `paging.${index}.${suffix}@console.example`,
        name: `Paging Person ${index}`,
        roles: index % 5 === 0 ? ['moderator'] : [],
      },
    });
    expect(response.status(), await response.text()).toBe(200);
  }
  const signIn = new SignInPage(page);
  const accounts = new AccountsPage(page);
  await page.goto('/console/accounts');
  await signIn.signIn(adminToken);
  await accounts.expectLoaded();
  await accounts.searchFor(suffix, 23);
  await expect(accounts.rows).toHaveCount(20);
  // Newest first: the 23rd is on top.
  await expect(accounts.rows.first().getByTestId('account-email')).toHaveText(`paging.23.${suffix}@console.example`);
  await page.getByTestId('accounts-table').locator('.n-pagination-item', { hasText: '2' }).click();
  await expect(accounts.rows).toHaveCount(3);
  await expect(accounts.rows.last().getByTestId('account-email')).toHaveText(`paging.1.${suffix}@console.example`);
  await page.screenshot({ path: path.join(screenshots, '13-accounts-page-2.png'), fullPage: true });

  // The role filter narrows on the server too (4 of the 23 are moderators).
  await page.getByTestId('accounts-role-filter').getByText('Moderators').click();
  await expect(accounts.total).toHaveText('4 accounts match');
  await expect(accounts.rows).toHaveCount(4);

  await accounts.search.fill(`no-such-${suffix}`);
  await expect(page.getByTestId('accounts-empty')).toHaveText(/No account matches/);
});

test('an admin creates a moderator whose owner sets a password with the one-time link and signs in', async ({ page, browser }) => {
  const admin = createConsoleAccount('Ada Admin', 'admin');
  const signIn = new SignInPage(page);
  const accounts = new AccountsPage(page);
  await page.goto('/console/accounts');
  await signIn.signInWithAccount(admin.email, admin.password);
  await accounts.expectLoaded();

  const email = `nina.new.${uniqueSuffix()}@console.example`;
  await page.getByTestId('create-account').click();
  await page.getByTestId('new-account-email').fill(email);
  await page.getByTestId('new-account-name').fill('Nina New');
  await page.getByTestId('create-account-submit').click();
  const link = await page.getByTestId('set-password-url').inputValue();
  expect(link).toMatch(/\/dashboard\/reset-password\?token=/);
  await page.screenshot({ path: path.join(screenshots, '14-account-created.png') });
  await page.getByTestId('created-account-done').click();
  await expect(accounts.row(email).getByTestId('account-name')).toHaveText('Nina New');
  await expect(accounts.roleBox(email, 'moderator')).toHaveClass(/n-checkbox--checked/);

  // Nina opens the link, chooses a password and signs in to the console as a moderator.
  const ninaContext = await browser.newContext();
  const nina = await ninaContext.newPage();
  const password = `nina's own passphrase ${uniqueSuffix()}`;
  await nina.goto(link);
  await nina.getByTestId('password-input').locator('input').fill(password);
  await nina.getByTestId('repeat-input').locator('input').fill(password);
  await nina.getByTestId('reset-confirm-button').click();
  await expect(nina.getByTestId('reset-error')).toHaveCount(0);
  await expect(nina).not.toHaveURL(/reset-password/);
  await nina.goto('/console/sign-in');
  const ninaSignIn = new SignInPage(nina);
  await ninaSignIn.signInWithAccount(email, password);
  await new OverviewPage(nina).expectLoaded();
  await expect(nina.getByTestId('actor')).toHaveText('Nina New');
  await expect(nina.getByTestId('actor-role')).toHaveText('moderator');
  await ninaContext.close();
});

test('a moderator whose role is taken away meanwhile is sent to sign in, and told why on trying again', async ({ page, request }) => {
  const moderator = createConsoleAccount('Rita Revoked', 'moderator');
  const signIn = new SignInPage(page);
  await page.goto('/console/sign-in');
  await signIn.signInWithAccount(moderator.email, moderator.password);
  await new OverviewPage(page).expectLoaded();

  const revoked = await request.post('/trpc/accounts.revokeRole', {
    headers: { authorization: `Bearer ${adminToken}` },
    data: { id: moderator.id, role: 'moderator' },
  });
  expect(revoked.status(), await revoked.text()).toBe(200);

  await page.getByTestId('nav-agents').click();
  await signIn.expectShown();
  await expect(page.getByTestId('session-ended')).toBeVisible();
  await expect(page).toHaveURL(/redirect=%2Fagents|redirect=\/agents/);
  await signIn.signInWithAccount(moderator.email, moderator.password);
  await expect(signIn.error).toContainText('no access to the moderator console');
});

test('an admin made a moderator meanwhile loses the admin screens at the next refusal, without signing out', async ({ page, request }) => {
  const admin = createConsoleAccount('Dora Demoted', 'admin');
  const signIn = new SignInPage(page);
  const accounts = new AccountsPage(page);
  await page.goto('/console/accounts');
  await signIn.signInWithAccount(admin.email, admin.password);
  await accounts.expectLoaded();

  for (const [procedure, role] of [
    ['accounts.grantRole', 'moderator'],
    ['accounts.revokeRole', 'admin'],
  ] as const) {
    const response = await request.post(`/trpc/${procedure}`, {
      headers: { authorization: `Bearer ${adminToken}` },
      data: { id: admin.id, role },
    });
    expect(response.status(), await response.text()).toBe(200);
  }

  // The next call the screen makes is refused as admin-only: the console reads the roles again.
  await accounts.search.fill('anyone');
  await expect(page.getByTestId('not-allowed')).toBeVisible();
  await expect(page.getByTestId('actor-role')).toHaveText('moderator');
  expect(await navEntries(page)).toEqual(MODERATOR_SCREENS);
});
