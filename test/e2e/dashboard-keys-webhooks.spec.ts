import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { Webhook } from 'standardwebhooks';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';
import { expectNoHorizontalOverflow } from './pages/accessibility';
import { settled } from './pages/console-api';
import { DashboardPage, linkFromMail } from './pages/dashboard-page';
import { collectPageErrors, screenshotScreen, uniqueSuffix } from './pages/directory-fixtures';

/**
 * A developer's whole way through the dashboard, in real Chromium against `npm run serve`: sign up, follow the
 * mail's link, sign in, issue a key and call the public API with it over HTTP, see the usage, add an endpoint
 * pointing at a real receiver on 127.0.0.1, test-send and verify the delivery with the official
 * `standardwebhooks` package and the secret the dashboard showed, read the delivery log and the payload
 * preview, rotate the secret and verify the next delivery with the new one. Every screen is photographed at
 * 1280 and 1024 px (test-results/screenshots/dashboard-flow-<screen>-<width>.png) and checked for sideways
 * overflow at 1024.
 */

const dataDir = process.env.AGENTDIR_E2E_DATA_DIR!;
const WIDTHS = [1280, 1024] as const;

/** Screenshots of the page as it is now at each width (full height), and no sideways overflow at 1024. */
async function shoot(page: Page, screen: string): Promise<void> {
  const size = page.viewportSize()!;
  await expect(page.locator('.n-message')).toHaveCount(0, { timeout: 15_000 });
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    await settled(page);
    if (width === 1024) {
      await expectNoHorizontalOverflow(page, `dashboard ${screen}`);
      // The layout's scroll container clips what is wider than the window: cards and tables must end inside it.
      const cut = (await page.evaluate(
        `[...document.querySelectorAll('main .n-card, main .n-data-table')].filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1).length`,
      )) as number;
      expect.soft(cut, `cards or tables cut off at the right on ${screen}`).toBe(0);
    }
    await screenshotScreen(page, `dashboard-flow-${screen}-${width}`);
  }
  await page.setViewportSize(size);
}

/** Dialogs float above the layout: photographed at the window's size. */
async function shootDialog(page: Page, screen: string): Promise<void> {
  const size = page.viewportSize()!;
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    await settled(page);
    await page.screenshot({ path: `test-results/screenshots/dashboard-flow-${screen}-${width}.png` });
  }
  await page.setViewportSize(size);
}

/** The standardwebhooks package's own verification of a received request, with `secret`. */
function verifiesWith(secret: string, hit: ReceivedWebhook): boolean {
  try {
    new Webhook(secret).verify(hit.rawBody.toString('utf8'), hit.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

async function someAgentId(request: APIRequestContext): Promise<string> {
  // A different agent from run to run and from the other specs (they take the first few by name).
  const page = 50 + (Date.now() % 200);
  const response = await request.get(`/api/v1/agents?limit=1&page=${page}&sort=name`);
  expect(response.status()).toBe(200);
  return (await response.json()).agents[0].id;
}

let receiver: WebhookReceiver;
test.beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
test.afterAll(async () => {
  await receiver.close();
});

test('a developer issues a key, calls the API with it, and receives, verifies and inspects webhooks', async ({ page, request }) => {
  test.setTimeout(120_000);
  const dashboard = new DashboardPage(page);
  const email = `flow-${uniqueSuffix()}@example.com`;
  const password = 'a long passphrase for the flow';

  // Sign up and verify, as a new developer does.
  await page.goto('/dashboard/sign-up');
  await expect(page.getByTestId('sign-up-button')).toBeVisible();
  await shoot(page, 'sign-up');
  await dashboard.signUp({ name: 'Katherine Johnson', email, password });
  await shoot(page, 'sign-up-sent');
  const link = await linkFromMail(dataDir, email, '/dashboard/verify-email');
  await page.goto(link);
  await expect(page.getByTestId('verify-done')).toBeVisible();
  await shoot(page, 'verify-done');
  await page.getByTestId('verify-sign-in').click();
  await expect(page).toHaveURL(/\/dashboard\/sign-in/);
  await expect(page.getByTestId('sign-in-notice')).toContainText('verified');
  await shoot(page, 'sign-in');
  await dashboard.signIn(email, password);
  await expect(page).toHaveURL(/\/dashboard\/keys/);
  await expect(dashboard.accountName).toHaveText('Katherine Johnson');
  // Signed out, the dashboard's GET /me answers 401 by design; from here on the console stays clean.
  const pageErrors = collectPageErrors(page);
  await expect(page.getByTestId('usage-total')).toHaveText('0');
  await shoot(page, 'keys-empty');

  // A key, shown once: copied from the page.
  await page.getByTestId('issue-key').click();
  await page.getByTestId('issue-key-name').fill('Flow laptop');
  await page.getByTestId('issue-key-submit').click();
  await expect(page.getByTestId('issued-key-value')).toHaveValue(/^adk_/);
  const key = await page.getByTestId('issued-key-value').inputValue();
  await expect(page.getByTestId('issued-key-example')).toContainText(key);
  await shootDialog(page, 'key-issued');
  await page.getByTestId('issued-key-done').click();
  await expect(page.getByTestId('key-row').filter({ hasText: 'Flow laptop' })).toBeVisible();
  await page.reload();
  await expect(page.getByTestId('key-row').filter({ hasText: 'Flow laptop' })).toBeVisible();
  expect(await page.content(), 'the full key is never shown again').not.toContain(key);

  // The public API with the key, over HTTP: a review by an account is a verified reviewer's.
  const agentId = await someAgentId(request);
  const auth = { Authorization: `Bearer ${key}` };
  const review = await request.post(`/api/v1/agents/${agentId}/reviews`, {
    headers: auth,
    data: { rating: 5, comment: 'Reviewed with a dashboard key' },
  });
  expect(review.status(), await review.text()).toBe(201);
  expect(await review.json()).toMatchObject({ verified_reviewer: true, rating: 5 });
  for (let i = 0; i < 3; i++) expect((await request.get('/api/v1/agents?limit=1', { headers: auth })).status()).toBe(200);
  const refused = await request.get('/api/v1/me', { headers: { Authorization: `Bearer ${key.slice(0, -2)}xx` } });
  expect(refused.status()).toBe(401);

  // The usage: four requests with the key today (counts are flushed before every read of them).
  await page.reload();
  await expect(page.getByTestId('usage-total')).toHaveText('4');
  const chart = page.getByTestId('usage-card').locator('[data-chart="time-series"]');
  await expect(chart).toHaveAttribute('data-points', '4');
  await expect(chart.locator('canvas').first()).toBeVisible();
  await expect(page.getByTestId('key-row').filter({ hasText: 'Flow laptop' })).not.toContainText('Never');
  await shoot(page, 'keys-usage');

  // An endpoint at the real receiver; the secret is shown once, on create.
  await dashboard.open('webhooks');
  await expect(page.getByTestId('endpoints-empty')).toBeVisible();
  await shoot(page, 'webhooks-empty');
  await page.getByTestId('add-endpoint').click();
  await page.getByTestId('endpoint-url').fill(receiver.url);
  await shootDialog(page, 'endpoint-add');
  await page.getByTestId('endpoint-scope-all').click();
  await page.getByTestId('endpoint-create-submit').click();
  await expect(page.getByTestId('secret-value')).toHaveValue(/^whsec_/);
  const secret = await page.getByTestId('secret-value').inputValue();
  await shootDialog(page, 'endpoint-secret');
  await page.getByTestId('secret-done').click();
  await expect(page.getByTestId('endpoint-detail-url')).toHaveText(receiver.url);
  const endpointId = (await page.getByTestId('endpoint-detail').getAttribute('data-endpoint-id'))!;

  // Test send: the delivery arrives and verifies with the standardwebhooks package and the secret from create.
  await dashboard.openTab('Test send');
  const before = receiver.received.length;
  const result = await dashboard.testSend();
  await expect(result).toHaveAttribute('data-ok', 'true');
  await expect(page.getByTestId('test-status')).toContainText('200');
  const deliveryId = (await result.getAttribute('data-delivery-id'))!;
  await receiver.waitFor((hits) => hits.length > before, 10_000, 'the test delivery');
  const hit = receiver.received.at(-1)!;
  expect(hit.isTest).toBe(true);
  expect(hit.body?.event).toBe('agent.registered');
  expect(hit.headers['webhook-id']).toBeTruthy();
  expect(verifiesWith(secret, hit), 'standardwebhooks verifies the test send with the secret shown on create').toBe(true);
  expect(verifiesWith('whsec_' + Buffer.from('not the secret at all!!').toString('base64'), hit)).toBe(false);
  await shoot(page, 'endpoint-test-send');

  // The delivery log lists it, with the receiver's answer.
  await dashboard.openTab('Delivery log');
  const row = page.locator(`[data-testid="delivery-row"][data-delivery-id="${deliveryId}"]`);
  await expect(row).toHaveAttribute('data-status', 'succeeded');
  await expect(row.getByTestId('delivery-status')).toHaveText('Succeeded');
  await shoot(page, 'endpoint-delivery-log');
  await row.click();
  await expect(page.getByTestId('attempt').first()).toHaveAttribute('data-status-code', '200');
  await shoot(page, 'endpoint-delivery-open');

  // The payload preview, from REST /me/webhooks/{id}/preview, signed with the endpoint's secret.
  const preview = await page.request.get(`/api/v1/me/webhooks/${endpointId}/preview`);
  expect(preview.status(), await preview.text()).toBe(200);
  const previewBody = await preview.json();
  expect(previewBody.previews.length).toBeGreaterThan(0);
  await dashboard.openTab('Payload preview');
  await expect(page.getByTestId('preview-ready')).toBeVisible();
  await expect(page.getByTestId('preview-headers')).toContainText(receiver.url);
  await expect(page.getByTestId('preview-body')).toContainText('"event"');
  await shoot(page, 'endpoint-preview');

  // Rotate the secret: the next delivery verifies with the new one.
  await page.getByTestId('detail-rotate').click();
  await expect(page.getByTestId('rotate-confirm')).toBeVisible();
  await shootDialog(page, 'endpoint-rotate-confirm');
  await page.getByTestId('rotate-confirm').getByRole('button', { name: 'Rotate' }).click();
  await expect(page.getByTestId('secret-value')).toHaveValue(/^whsec_/);
  const rotated = await page.getByTestId('secret-value').inputValue();
  expect(rotated).not.toBe(secret);
  await page.getByTestId('secret-done').click();
  await dashboard.openTab('Test send');
  const beforeRotated = receiver.received.length;
  await expect(await dashboard.testSend()).toHaveAttribute('data-ok', 'true');
  await receiver.waitFor((hits) => hits.length > beforeRotated, 10_000, 'the test delivery after rotation');
  const afterRotation = receiver.received.at(-1)!;
  expect(verifiesWith(rotated, afterRotation), 'the new secret verifies').toBe(true);

  // The list of endpoints, and the other screens, as they look with data in them.
  await dashboard.open('webhooks');
  await expect(page.getByTestId('endpoint-row')).toHaveCount(1);
  await shoot(page, 'webhooks');
  for (const screen of ['claims', 'agents', 'settings'] as const) {
    await dashboard.open(screen);
    await expect(page.getByTestId('page-title')).toBeVisible();
    await expect(page.locator('.n-skeleton')).toHaveCount(0);
    await shoot(page, screen);
  }
  expect(pageErrors).toEqual([]);
});
