import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { expectAccessible } from './pages/accessibility';
import { DashboardPage, linkFromMail } from './pages/dashboard-page';
import { createConsoleAccount } from './pages/console-accounts';
import { importAgents, signInAsModerator, testAgent, trpc, uniqueSuffix } from './pages/directory-fixtures';
import { SignInPage } from './pages/sign-in-page';

/**
 * axe-core (WCAG 2.1 A/AA) over every screen of the console and the developer dashboard and their main dialogs
 * and drawers: no critical or serious violation. Each scan also lands in test-results/axe/<screen>.json.
 */

const dataDir = process.env.AGENTDIR_E2E_DATA_DIR!;

async function ensureEndpoint(request: APIRequestContext): Promise<string> {
  const created = await trpc<{ id: string }>(
    request,
    'webhooks.create',
    { url: `http://127.0.0.1:9/a11y-${uniqueSuffix()}`, description: 'Accessibility check' },
    'mutation',
  );
  return created.id;
}

async function submitOne(request: APIRequestContext): Promise<void> {
  const slug = `a11y-${uniqueSuffix()}`;
  for (let attempt = 0; ; attempt++) {
    const response = await request.post('/api/v1/submit', {
      data: {
        name: `A11y Watcher ${slug}`,
        tagline: 'Keeps an eye on accessibility',
        source_url: `https://${slug}.example.com/agent`,
        description: 'Submitted by the accessibility check.',
        author: 'E2E Labs',
        capabilities: ['monitoring'],
        categories: ['devops'],
        type: 'devops',
        contact_email: `maintainer+${slug}@example.com`,
      },
    });
    if (response.status() === 429 && attempt < 2) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers()['retry-after'] ?? '5') * 1000 + 250));
      continue;
    }
    expect(response.status(), await response.text()).toBe(201);
    return;
  }
}

async function openConsole(page: Page, screen: string, ready: string): Promise<void> {
  await page.goto(`/console/${screen}`);
  await expect(page.getByTestId(ready).first()).toBeVisible();
}

test.describe('the console', () => {
  test.beforeEach(async ({ page }) => signInAsModerator(page));

  test('the sign-in screen', async ({ browser }) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const signIn = new SignInPage(page);
    await page.goto('/console/sign-in');
    // The e-mail and password form is the first tab, then its error state, then the admin token's tab.
    await expect(page.getByTestId('account-form')).toBeVisible();
    await expectAccessible(page, 'console-sign-in');
    await signIn.signInWithAccount(`nobody-${uniqueSuffix()}@example.com`, 'not the password at all');
    await expect(signIn.error).toBeVisible();
    await expectAccessible(page, 'console-sign-in-error');
    await signIn.tokenTab.click();
    await expect(page.getByTestId('token-form')).toBeVisible();
    await expectAccessible(page, 'console-sign-in-token');
    await context.close();
  });

  test('accounts and the new-account dialog', async ({ page, request }) => {
    await trpc(
      request,
      'accounts.create',
      { email: `a11y-${uniqueSuffix()}@example.com`, name: 'A11y Person', roles: ['moderator'] },
      'mutation',
    );
    await openConsole(page, 'accounts', 'accounts-ready');
    await expect(page.getByTestId('accounts-view')).toHaveAttribute('data-busy', 'false');
    await expect(page.getByTestId('account-row').first()).toBeVisible();
    await expectAccessible(page, 'console-accounts');
    await page.getByTestId('create-account').click();
    await expect(page.getByTestId('create-account-dialog')).toBeVisible();
    await expectAccessible(page, 'console-accounts-create-dialog');
  });

  test("a moderator's shell and an admin-only screen", async ({ browser }) => {
    const moderator = createConsoleAccount('A11y Moderator', 'moderator');
    const context = await browser.newContext();
    const page = await context.newPage();
    const signIn = new SignInPage(page);
    await page.goto('/console/accounts');
    await signIn.signInWithAccount(moderator.email, moderator.password);
    await expect(page.getByTestId('not-allowed')).toBeVisible();
    await expectAccessible(page, 'console-not-allowed');
    await context.close();
  });

  test('overview, claims, edit requests, newsletter', async ({ page }) => {
    await openConsole(page, 'overview', 'page-title');
    await expect(page.locator('.n-skeleton')).toHaveCount(0);
    await expectAccessible(page, 'console-overview');
    await openConsole(page, 'claims', 'claims-view');
    await expect(page.getByTestId('claims-view')).toHaveAttribute('data-busy', 'false');
    await expectAccessible(page, 'console-claims');
    await openConsole(page, 'edit-requests', 'edit-requests-view');
    await expect(page.getByTestId('edit-requests-view')).toHaveAttribute('data-busy', 'false');
    await expectAccessible(page, 'console-edit-requests');
    await openConsole(page, 'newsletter', 'page-title');
    await expect(page.getByTestId('newsletter-ready').or(page.getByTestId('newsletter-empty'))).toBeVisible();
    await expectAccessible(page, 'console-newsletter');
  });

  test('submissions, the reject dialog and the shortcut help', async ({ page, request }) => {
    await submitOne(request);
    await openConsole(page, 'submissions', 'submissions-view');
    await expect(page.getByTestId('submission-row').first()).toBeVisible();
    await page.getByTestId('submission-row').first().locator('td').last().click();
    await expect(page.getByTestId('submission-detail')).toBeVisible();
    await expectAccessible(page, 'console-submissions');
    await page.getByTestId('reject-button').click();
    await expect(page.getByTestId('reject-dialog')).toBeVisible();
    await expectAccessible(page, 'console-submissions-reject-dialog');
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('reject-dialog')).toBeHidden();
    await page.getByTestId('shortcuts-button').click();
    await expect(page.getByTestId('shortcut-help')).toBeVisible();
    await expectAccessible(page, 'console-submissions-shortcuts');
  });

  test('agents and the agent drawer', async ({ page }) => {
    await openConsole(page, 'agents', 'agents-table');
    await expect(page.getByTestId('agents-table')).toHaveAttribute('data-loaded', 'true');
    await expectAccessible(page, 'console-agents');
    await page.getByTestId('agent-row').first().click();
    await expect(page.getByTestId('agent-save')).toBeVisible();
    await expectAccessible(page, 'console-agents-drawer');
  });

  test('marketing: posts, the post drawer, metrics and A/B tests', async ({ page }) => {
    await openConsole(page, 'marketing', 'posts-table');
    await expect(page.getByTestId('posts-table')).toHaveAttribute('data-loaded', 'true');
    await expectAccessible(page, 'console-marketing-posts');
    const row = page.getByTestId('post-row').first();
    if (await row.isVisible()) {
      await row.click();
      await expect(page.getByTestId('post-save')).toBeVisible();
      await expectAccessible(page, 'console-marketing-post-drawer');
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('post-drawer')).toBeHidden();
    }
    await page.getByRole('tab', { name: 'Metrics' }).click();
    await expect(page.getByTestId('metrics-panel').or(page.getByTestId('metrics-error'))).toBeVisible();
    await expectAccessible(page, 'console-marketing-metrics');
    await page.getByRole('tab', { name: 'A/B tests' }).click();
    await expect(page.getByTestId('ab-table')).toHaveAttribute('data-loaded', 'true');
    await expectAccessible(page, 'console-marketing-ab-tests');
  });

  test('webhooks: the list, the add dialog and an endpoint', async ({ page, request }) => {
    const id = await ensureEndpoint(request);
    await openConsole(page, 'webhooks', 'endpoints-ready');
    await expectAccessible(page, 'console-webhooks');
    await page.getByTestId('add-endpoint').click();
    await expect(page.getByTestId('endpoint-dialog')).toBeVisible();
    await expectAccessible(page, 'console-webhooks-add-dialog');
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('endpoint-dialog')).toBeHidden();
    await page.goto(`/console/webhooks?endpoint=${id}`);
    await expect(page.getByTestId('endpoint-detail')).toHaveAttribute('data-endpoint-id', id);
    await expect(page.getByTestId('delivery-log')).toBeVisible();
    await expectAccessible(page, 'console-webhooks-endpoint');
    await page.getByTestId('endpoint-tabs').getByRole('tab', { name: 'Payload preview' }).click();
    await expect(page.getByTestId('preview-ready')).toBeVisible();
    await expectAccessible(page, 'console-webhooks-payload-preview');
    await trpc(request, 'webhooks.remove', { id }, 'mutation');
  });

  test('API keys and the issue dialog', async ({ page }) => {
    await openConsole(page, 'api-keys', 'issue-key');
    await expectAccessible(page, 'console-api-keys');
    await page.getByTestId('issue-key').click();
    await expect(page.getByTestId('issue-key-dialog')).toBeVisible();
    await expectAccessible(page, 'console-api-keys-issue-dialog');
  });

  test('the audit log and an entry', async ({ page }) => {
    await openConsole(page, 'audit-log', 'audit-ready');
    await expectAccessible(page, 'console-audit-log');
    await page.getByTestId('audit-row').first().click();
    await expect(page.getByTestId('audit-drawer')).toBeVisible();
    await expectAccessible(page, 'console-audit-log-drawer');
  });
});

test.describe('the developer dashboard', () => {
  test('the signed-out pages', async ({ page }) => {
    for (const [name, ready] of [
      ['sign-in', 'sign-in-button'],
      ['sign-up', 'sign-up-button'],
      ['forgot-password', 'page-title'],
    ] as const) {
      await page.goto(`/dashboard/${name}`);
      await expect(page.getByTestId(ready).or(page.locator('form')).first()).toBeVisible();
      await expectAccessible(page, `dashboard-${name}`);
    }
    // The pages mails link to: a reset form with its token, and a verification link that no longer works.
    await page.goto('/dashboard/reset-password?token=a11y-token');
    await expect(page.getByTestId('reset-confirm-button')).toBeVisible();
    await expectAccessible(page, 'dashboard-reset-password');
    await page.goto('/dashboard/verify-email?token=a11y-used-token');
    await expect(page.getByTestId('verify-failed')).toBeVisible();
    await expectAccessible(page, 'dashboard-verify-email-failed');
  });

  test('the newsletter pages behind the links of newsletter mails', async ({ page, request }) => {
    test.setTimeout(120_000); // in case the shared write limit has to be waited out
    const reader = `a11y-reader-${uniqueSuffix()}@example.com`;
    let response = await request.post('/api/v1/newsletter', { data: { email: reader } });
    if (response.status() === 429) {
      // The write limit is shared by every spec: wait it out once.
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers()['retry-after'] ?? '60') * 1000));
      response = await request.post('/api/v1/newsletter', { data: { email: reader } });
    }
    expect(response.status()).toBe(202);
    await page.goto(await linkFromMail(dataDir, reader, '/dashboard/newsletter/confirm'));
    await expect(page.getByTestId('newsletter-confirm-done')).toBeVisible();
    await expectAccessible(page, 'dashboard-newsletter-confirmed');
    await page.goto(await linkFromMail(dataDir, reader, '/dashboard/newsletter/unsubscribe'));
    await expect(page.getByTestId('newsletter-unsubscribe')).toBeVisible();
    await expectAccessible(page, 'dashboard-newsletter-unsubscribe');
    await page.getByTestId('newsletter-unsubscribe').click();
    await expect(page.getByTestId('newsletter-unsubscribe-done')).toBeVisible();
    await expectAccessible(page, 'dashboard-newsletter-unsubscribed');
    await page.goto('/dashboard/newsletter/confirm?token=not-a-token');
    await expect(page.getByTestId('newsletter-confirm-failed')).toBeVisible();
    await expectAccessible(page, 'dashboard-newsletter-link-failed');
  });

  test('every signed-in screen, the key and endpoint dialogs and an endpoint page', async ({ page }) => {
    test.setTimeout(90_000);
    const dashboard = new DashboardPage(page);
    const email = `a11y-${uniqueSuffix()}@example.com`;
    const password = 'a long passphrase for a11y';
    await dashboard.signUp({ name: 'Ada Lovelace', email, password });
    await expectAccessible(page, 'dashboard-sign-up-sent');
    await page.goto(await linkFromMail(dataDir, email, '/dashboard/verify-email'));
    await expect(page.getByTestId('verify-done')).toBeVisible();
    await expectAccessible(page, 'dashboard-verify-email-done');
    await page.getByTestId('verify-sign-in').click();
    await expect(page).toHaveURL(/\/dashboard\/sign-in/);
    await dashboard.signIn(email, password);
    await expect(page).toHaveURL(/\/dashboard\/keys/);

    await expectAccessible(page, 'dashboard-keys');
    await page.getByTestId('issue-key').click();
    await expect(page.getByTestId('issue-key-dialog')).toBeVisible();
    await expectAccessible(page, 'dashboard-keys-issue-dialog');
    await page.keyboard.press('Escape');

    await dashboard.open('webhooks');
    await expectAccessible(page, 'dashboard-webhooks');
    await page.getByTestId('add-endpoint').click();
    await expect(page.getByTestId('endpoint-create-dialog')).toBeVisible();
    await expectAccessible(page, 'dashboard-webhooks-add-dialog');
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('endpoint-create-dialog')).toBeHidden();
    await page.getByTestId('add-endpoint').click();
    await page.getByTestId('endpoint-url').fill(`http://127.0.0.1:9/a11y-${uniqueSuffix()}`);
    await page.getByTestId('endpoint-create-submit').click();
    await expect(page.getByTestId('secret-value')).toHaveValue(/^whsec_/);
    await expectAccessible(page, 'dashboard-webhooks-secret-dialog');
    await page.getByTestId('secret-done').click();
    await expect(page.getByTestId('endpoint-detail')).toBeVisible();
    await expectAccessible(page, 'dashboard-webhook');
    await dashboard.testSend();
    await expectAccessible(page, 'dashboard-webhook-test-send');
    await dashboard.openTab('Delivery log');
    await expect(page.getByTestId('delivery-row').first()).toBeVisible();
    await expectAccessible(page, 'dashboard-webhook-delivery-log');
    await dashboard.openTab('Payload preview');
    await expect(page.getByTestId('preview-ready')).toBeVisible();
    await expectAccessible(page, 'dashboard-webhook-payload-preview');
    await page.getByTestId('detail-rotate').click();
    await expect(page.getByTestId('rotate-confirm')).toBeVisible();
    await expectAccessible(page, 'dashboard-webhook-rotate-dialog');
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('rotate-confirm')).toBeHidden();

    for (const screen of ['claims', 'agents', 'settings'] as const) {
      await dashboard.open(screen);
      await expect(page.getByTestId('page-title')).toBeVisible();
      await expectAccessible(page, `dashboard-${screen}`);
    }
  });

  test("an owner's agents and edit requests, the reviews dialog and its reply form", async ({ page, request }) => {
    test.setTimeout(60_000);
    const dashboard = new DashboardPage(page);
    const email = `a11y-owner-${uniqueSuffix()}@example.com`;
    const password = 'a long passphrase for a11y';
    await dashboard.signUp({ name: 'Grace Owner', email, password });
    await page.goto(await linkFromMail(dataDir, email, '/dashboard/verify-email'));
    await page.getByTestId('verify-sign-in').click();
    await dashboard.signIn(email, password);
    await expect(page).toHaveURL(/\/dashboard\/keys/);

    // An agent this account owns: claimed signed in, verified by a moderator; and a review of it.
    const agent = testAgent('A11y Owned');
    importAgents([agent]);
    const claimed = await page.request.post('/api/v1/claims', {
      data: { agent_id: agent.id, claimant_name: 'Grace Owner', claimant_email: email },
    });
    expect(claimed.status(), await claimed.text()).toBe(201);
    await trpc(request, 'claims.verifyManually', { id: (await claimed.json()).id, note: 'accessibility check' }, 'mutation');
    const reviewed = await request.post(`/api/v1/agents/${agent.id}/reviews`, {
      data: { rating: 4, comment: 'Works well with screen readers.', reviewer_name: 'Axe Tester' },
    });
    expect(reviewed.status(), await reviewed.text()).toBe(201);

    // A rename waiting for a moderator, so the edit requests list shows too.
    const renamed = await page.request.patch(`/api/v1/me/agents/${agent.id}`, { data: { name: `${agent.name} Renamed` } });
    expect(renamed.status(), await renamed.text()).toBe(202);

    await dashboard.open('agents');
    await expect(page.getByTestId('own-edit-request')).toHaveCount(1);
    await expectAccessible(page, 'dashboard-agents-with-edit-requests');
    const row = page.locator(`[data-testid="agent-row"][data-agent-id="${agent.id}"]`);
    await row.getByTestId('agent-reviews').click();
    const dialog = page.getByTestId('agent-reviews-dialog');
    await expect(dialog.getByTestId('agent-review')).toHaveCount(1);
    await expectAccessible(page, 'dashboard-agent-reviews-dialog');
    await dialog.getByTestId('agent-review-reply-start').click();
    await dialog.getByTestId('agent-review-reply-input').locator('textarea').fill('Thank you!');
    await expectAccessible(page, 'dashboard-agent-reviews-reply-form');
    await dialog.getByTestId('agent-review-reply-send').click();
    await expect(dialog.getByTestId('agent-review-reply')).toContainText('Thank you!');
    await expectAccessible(page, 'dashboard-agent-reviews-replied');
  });
});
