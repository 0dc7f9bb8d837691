import { createHmac } from 'node:crypto';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';
import {
  auditOf,
  collectPageErrors,
  screenshotPath,
  screenshotScreen,
  signInAsModerator,
  trpc,
  uniqueSuffix,
} from './pages/directory-fixtures';
import { mockProcedures, serverError, settled } from './pages/console-api';
import { WebhooksPage } from './pages/webhooks-page';

/**
 * The webhooks screens against a real receiver: node:http on 127.0.0.1,
 * started here (the server runs with --allow-private-urls). The receiver checks
 * every signature with the secret the console showed; retries use the default
 * schedule (a minute first), so a failed first attempt stays pending and
 * "Redeliver" is what sends it again.
 */

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string;
  active: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  version: number;
}
type CreatedEndpoint = Endpoint & { secret: string };

const EVENT_KINDS = ['agent.registered', 'agent.updated', 'agent.verified', 'review.created', 'claim.approved'];

/** `sha256=` + hex HMAC-SHA256 of the raw body: computed here, with the test's own code. */
const sign = (secret: string, body: Buffer) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** The id of the n-th listed agent (0-based): one review per agent per IP a day, so each review picks its own agent. */
async function nthAgentId(request: APIRequestContext, n = 0): Promise<string> {
  const response = await request.get(`/api/v1/agents?limit=1&page=${n + 1}&sort=name`);
  expect(response.status()).toBe(200);
  return (await response.json()).agents[0].id;
}

/**
 * Posts a review as a member of the public would (one review.created event).
 * The write limit (20 a minute per IP) is shared with every spec of the run,
 * so a 429 waits for the window its Retry-After names.
 */
async function postReview(request: APIRequestContext, agentId: string, rating: number): Promise<{ id: string }> {
  for (let attempt = 0; ; attempt++) {
    const response = await request.post(`/api/v1/agents/${agentId}/reviews`, {
      data: { rating, comment: 'Posted by the webhooks end-to-end test', reviewer_name: 'E2E' },
    });
    if (response.status() === 429 && attempt < 2) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers()['retry-after'] ?? '5') * 1000 + 250));
      continue;
    }
    expect(response.status(), await response.text()).toBe(201);
    return response.json();
  }
}

/** The receiver's request carrying the review's event (the first one, or all of them). */
async function hitsOfReview(receiver: WebhookReceiver, reviewId: string, count = 1): Promise<ReceivedWebhook[]> {
  const matching = (hits: ReceivedWebhook[]) => hits.filter((hit) => hit.body?.data.review_id === reviewId);
  await receiver.waitFor((hits) => matching(hits).length >= count, 15_000, `${count} delivery(ies) of review ${reviewId}`);
  return matching(receiver.received);
}

const endpointIdFromUrl = (page: Page) => new URL(page.url()).searchParams.get('endpoint')!;

/** Waits for the toasts of earlier actions to go, so they do not cover a screenshot. */
async function quiet(page: Page): Promise<void> {
  await expect(page.locator('.n-message')).toHaveCount(0);
  await settled(page);
}

test.describe('Webhooks', () => {
  let receiver: WebhookReceiver;

  test.beforeEach(async ({ page }) => {
    receiver = await startWebhookReceiver({
      respond: () => ({ status: 200, body: '{"received":true}', headers: { 'content-type': 'application/json' } }),
    });
    await signInAsModerator(page);
  });
  /** Endpoints a test made and did not remove itself: removed afterwards, so no other spec's events go to a closed receiver. */
  const leftovers: string[] = [];
  test.afterEach(async ({ request }) => {
    const { endpoints } = await trpc<{ endpoints: Endpoint[] }>(request, 'webhooks.list');
    for (const id of leftovers.splice(0)) {
      if (endpoints.some((endpoint) => endpoint.id === id)) await trpc(request, 'webhooks.remove', { id }, 'mutation');
    }
    await receiver?.close();
  });

  test('an endpoint added in the console gets signed test sends, and a failed delivery is redelivered', async ({
    page,
    request,
    context,
    baseURL,
  }) => {
    test.setTimeout(120_000);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL! });
    const pageErrors = collectPageErrors(page);
    const hooks = new WebhooksPage(page);
    const description = `E2E receiver ${uniqueSuffix()}`;

    await hooks.goto();
    await hooks.expectListLoaded();

    // Adding: the form checks the URL before anything is sent.
    await hooks.addButton.click();
    await expect(hooks.form).toBeVisible();
    await expect(hooks.formUrl).toBeFocused();
    await hooks.formSubmit.click();
    await expect(hooks.form).toContainText('Enter the URL deliveries are POSTed to');
    await hooks.formUrl.fill('ftp://files.example.com/drop');
    await expect(hooks.form).toContainText('Only http:// and https:// URLs can receive webhooks');
    await hooks.formUrl.fill(receiver.url);
    await hooks.chooseEvents(['review.created', 'agent.registered']);
    await hooks.formDescription.fill(description);
    await hooks.formUrl.fill('not a url');
    await expect(hooks.form).toContainText('Enter an absolute URL');
    await quiet(page);
    await page.screenshot({ path: screenshotPath('91-webhooks-add-validation') });
    await hooks.formUrl.fill(receiver.url);
    await hooks.formSubmit.click();

    // The secret, shown once, with a working copy button; Escape does not lose it.
    await expect(hooks.secretDialog).toHaveAttribute('data-mode', 'created');
    await expect(page.getByTestId('secret-once')).toContainText('a moderator can reveal it later');
    const secret = await hooks.secretValue.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await hooks.secretCopy.click();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
    await quiet(page);
    await page.screenshot({ path: screenshotPath('92-webhooks-secret-once') });
    await page.keyboard.press('Escape');
    await expect(hooks.secretValue).toBeVisible();
    receiver.secret = secret;
    await hooks.secretDone.click();

    // Next step: the new endpoint's test tab.
    await expect(page).toHaveURL(/[?&]tab=test/);
    const endpointId = endpointIdFromUrl(page);
    leftovers.push(endpointId);
    await hooks.expectDetailOf(endpointId);
    const stored = (await trpc<{ endpoints: Endpoint[] }>(request, 'webhooks.list')).endpoints.find((e) => e.id === endpointId)!;
    expect(stored).toMatchObject({ url: receiver.url, events: ['review.created', 'agent.registered'], description, active: true });

    // A test send: the receiver's answer on screen, and a request signed with the secret the console showed.
    await hooks.select(page.getByTestId('test-kind'), 'review.created');
    await page.getByTestId('test-send').click();
    await expect(hooks.testResult).toHaveAttribute('data-ok', 'true');
    await expect(page.getByTestId('test-summary')).toContainText('Answered HTTP 200 in');
    await expect(page.getByTestId('test-status')).toHaveText('200');
    await expect(page.getByTestId('test-latency')).toHaveText(/^\d+ ms$/);
    await expect(hooks.testResult.getByTestId('attempt-response')).toContainText('"received": true');
    const testDeliveryId = (await hooks.testResult.getAttribute('data-delivery-id'))!;
    const testHit = receiver.received.find((hit) => hit.deliveryId === testDeliveryId)!;
    expect(testHit.isTest).toBe(true);
    expect(testHit.headers['x-service-event']).toBe('review.created');
    expect(testHit.headers['x-service-signature']).toBe(sign(secret, testHit.rawBody));
    expect(testHit.signatureValid).toBe(true);
    expect(testHit.standardValid).toBe(true);
    await expect(hooks.testResult.getByTestId('attempt-request-body')).toHaveText(testHit.rawBody.toString('utf8'));
    await expect(page.getByTestId('test-event-id')).toHaveText(testHit.eventId!);
    await quiet(page);
    await screenshotScreen(page, '93-webhooks-test-send');

    // The preview shows the very bytes and signature the receiver got for that kind.
    await hooks.tab('preview');
    await page.getByTestId('preview-kind-review.created').click();
    await expect(hooks.preview).toHaveAttribute('data-event', 'review.created');
    await expect(page.getByTestId('preview-signature')).toHaveText(String(testHit.headers['x-service-signature']));
    await expect(page.getByTestId('preview-body')).toHaveText(testHit.rawBody.toString('utf8'));
    await expect(page.getByTestId('preview-headers')).toContainText(`X-Service-Signature: ${testHit.headers['x-service-signature']}`);
    await expect(page.getByTestId('preview-headers')).toContainText('X-Service-Event: review.created');
    await expect(page.getByTestId('preview-snippet-node')).toContainText('timingSafeEqual');
    await page.getByTestId('preview-copy-signature').click();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(testHit.headers['x-service-signature']);
    await page.getByTestId('preview-snippets').locator('.n-tabs-tab', { hasText: 'Python' }).click();
    await expect(page.getByTestId('preview-snippet-python')).toContainText('hmac.compare_digest');
    await page.getByTestId('preview-copy-python').click();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toContain('def verify_webhook');
    await page.getByTestId('preview-snippets').locator('.n-tabs-tab', { hasText: 'Node.js' }).click();
    await quiet(page);
    await screenshotScreen(page, '94-webhooks-payload-preview');

    // A real event the receiver refuses: a review posted through the public API.
    receiver.respond = () => ({ status: 500, body: 'receiver is down for maintenance' });
    const agentId = await nthAgentId(request, 0);
    const review = await postReview(request, agentId, 3);
    const [failedHit] = await hitsOfReview(receiver, review.id);
    const eventId = failedHit!.eventId!;
    expect(failedHit!.headers['x-service-signature']).toBe(sign(secret, failedHit!.rawBody));
    const reviews = await (await request.get(`/api/v1/agents/${agentId}/reviews?limit=5`)).json();
    expect(reviews.reviews.map((entry: { id: string }) => entry.id)).toContain(review.id);

    // The log shows the failed attempt (retry due in about a minute), down to the receiver's answer.
    await hooks.tab('log');
    const failedRow = hooks.deliveryRows(eventId);
    await expect(failedRow).toHaveAttribute('data-status', 'pending');
    await expect(failedRow.getByTestId('delivery-last-answer')).toContainText('HTTP 500');
    await expect(failedRow).toContainText(/retry in/);
    await expect(page.getByTestId('endpoint-detail-failures')).toHaveText('1');
    const failedId = (await failedRow.getAttribute('data-delivery-id'))!;
    expect(failedId).toBe(failedHit!.deliveryId);
    await failedRow.click();
    const attempts = hooks.attempts(failedId);
    await expect(attempts.getByTestId('attempt-status')).toHaveText('HTTP 500');
    await expect(attempts.getByTestId('attempt-error')).toHaveText('the receiver answered 500');
    await expect(attempts.getByTestId('attempt-response')).toHaveText('receiver is down for maintenance');
    await expect(attempts.getByTestId('attempt-latency')).toHaveText(/^\d+ ms$/);
    await expect(attempts.getByTestId('attempt-request-body')).toHaveText(failedHit!.rawBody.toString('utf8'));
    await expect(attempts.getByTestId('attempt-request-headers')).toContainText(
      `X-Service-Signature: ${failedHit!.headers['x-service-signature']}`,
    );
    await quiet(page);
    await screenshotScreen(page, '95-webhooks-delivery-failed');

    // The receiver recovers; "Redeliver" sends the same event again, and the log shows it succeed.
    receiver.respond = () => ({ status: 200, body: '{"received":true}', headers: { 'content-type': 'application/json' } });
    await failedRow.getByTestId('delivery-redeliver').click();
    await expect(hooks.message('Redelivery queued')).toBeVisible();
    await expect(hooks.deliveryRows(eventId)).toHaveCount(2);
    const redeliveredRow = page.locator(`[data-testid="delivery-row"][data-event-id="${eventId}"]:not([data-delivery-id="${failedId}"])`);
    await expect(redeliveredRow).toHaveAttribute('data-status', 'succeeded');
    await expect(redeliveredRow.getByTestId('delivery-last-answer')).toHaveText('HTTP 200');
    const redeliveredId = (await redeliveredRow.getAttribute('data-delivery-id'))!;
    await expect(hooks.attempts(redeliveredId).getByTestId('attempt-status')).toHaveText('HTTP 200');
    await expect(page.getByTestId('endpoint-detail-failures')).toHaveText('0');
    const hits = await hitsOfReview(receiver, review.id, 2);
    expect(hits.map((hit) => hit.eventId)).toEqual([eventId, eventId]);
    expect(hits[1]!.deliveryId).toBe(redeliveredId);
    expect(hits[1]!.rawBody.equals(failedHit!.rawBody)).toBe(true);
    expect(hits[1]!.headers['x-service-signature']).toBe(sign(secret, hits[1]!.rawBody));
    await quiet(page);
    await screenshotScreen(page, '96-webhooks-redelivered');

    // Back on the list: the latest delivery succeeded, and the success reset the failure count.
    await page.getByTestId('endpoint-back').click();
    const row = hooks.row(endpointId);
    await expect(row.getByTestId('endpoint-last-delivery')).toHaveAttribute('data-status', 'succeeded');
    await expect(row.getByTestId('endpoint-failures')).toHaveText('0');
    await expect(row.getByTestId('endpoint-events-cell')).toContainText('review.created');
    await expect(row).toContainText(description);
    await quiet(page);
    await screenshotScreen(page, '90-webhooks-endpoints');

    // Every step is in the audit log, with the moderator as actor.
    const endpointAudit = await auditOf(request, endpointId);
    expect(endpointAudit.filter((entry) => entry.actor === 'admin-token').map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['webhook.create', 'webhook.test']),
    );
    expect(endpointAudit.find((entry) => entry.action === 'webhook.test')!.after).toMatchObject({
      delivery_id: testDeliveryId,
      event: 'review.created',
    });
    const redeliveryAudit = await auditOf(request, redeliveredId);
    expect(redeliveryAudit).toEqual([
      expect.objectContaining({
        actor: 'admin-token',
        action: 'webhook.redeliver',
        before: { delivery_id: failedId },
        after: { delivery_id: redeliveredId, event_id: eventId },
      }),
    ]);
    expect(pageErrors).toEqual([]);
  });

  test('edit (with a stale-version warning), disable, enable, reveal and rotate the secret, redeliver all failed, remove', async ({
    page,
    request,
  }) => {
    test.setTimeout(120_000);
    const hooks = new WebhooksPage(page);
    const created = await trpc<CreatedEndpoint>(
      request,
      'webhooks.create',
      { url: receiver.url, events: ['review.created'], description: `Managed ${uniqueSuffix()}` },
      'mutation',
    );
    receiver.secret = created.secret;
    leftovers.push(created.id);
    const get = () => trpc<Endpoint>(request, 'webhooks.get', { id: created.id });

    await hooks.goto();
    await hooks.expectListLoaded();
    const row = hooks.row(created.id);
    await expect(row).toBeVisible();

    // Someone else saves first: the form says so, loads their version, and the change goes through on top.
    await row.getByTestId('endpoint-edit').click();
    await expect(hooks.form).toBeVisible();
    await expect(hooks.formUrl).toHaveValue(receiver.url);
    await hooks.formDescription.fill('Edited in the console');
    await trpc(request, 'webhooks.update', { id: created.id, expectedVersion: 1, description: 'Edited elsewhere' }, 'mutation');
    await hooks.formSubmit.click();
    await expect(hooks.formStale).toContainText('changed after you opened it');
    await quiet(page);
    await page.screenshot({ path: screenshotPath('97-webhooks-edit-stale') });
    expect((await get()).description).toBe('Edited elsewhere');
    await hooks.formStaleReload.click();
    await expect(hooks.formDescription).toHaveValue('Edited elsewhere');
    await hooks.formDescription.fill('Edited in the console');
    await hooks.chooseEvents(['agent.verified']);
    await hooks.formSubmit.click();
    await expect(hooks.message('Endpoint saved')).toBeVisible();
    await expect(hooks.form).toBeHidden();
    await expect(row).toContainText('Edited in the console');
    await expect(row.getByTestId('endpoint-events-cell')).toContainText('agent.verified');
    expect(await get()).toMatchObject({ description: 'Edited in the console', events: ['review.created', 'agent.verified'], version: 3 });

    // Disable with a reason, then enable.
    await row.getByTestId('endpoint-disable').click();
    await expect(hooks.disableDialog).toBeVisible();
    await page.getByTestId('disable-reason').fill('Receiver maintenance until Friday');
    await quiet(page);
    await page.screenshot({ path: screenshotPath('98-webhooks-disable-dialog') });
    await page.getByTestId('disable-confirm').click();
    await expect(row).toHaveAttribute('data-active', 'false');
    await expect(row.getByTestId('endpoint-disabled-reason')).toHaveText('Receiver maintenance until Friday');
    expect(await get()).toMatchObject({ active: false, disabled_reason: 'Receiver maintenance until Friday' });
    await row.getByTestId('endpoint-enable').click();
    await expect(row).toHaveAttribute('data-active', 'true');
    expect((await get()).active).toBe(true);

    // Reveal (confirmed first, since it is audited), then rotate.
    await hooks.rowMenu(row, 'reveal');
    await expect(hooks.secretDialog).toHaveAttribute('data-mode', 'reveal');
    await expect(page.getByTestId('secret-confirm')).toContainText('recorded in the audit log');
    await hooks.secretConfirm.click();
    await expect(hooks.secretValue).toHaveValue(created.secret);
    await quiet(page);
    await page.screenshot({ path: screenshotPath('99-webhooks-reveal-secret') });
    await hooks.secretDone.click();
    await expect(hooks.secretDialog).toBeHidden();

    await hooks.rowMenu(row, 'rotate');
    await expect(page.getByTestId('secret-confirm')).toContainText('takes effect at once');
    await quiet(page);
    await page.screenshot({ path: screenshotPath('99-webhooks-rotate-confirm') });
    await hooks.secretConfirm.click();
    await expect(page.getByTestId('secret-once')).toBeVisible();
    const rotated = await hooks.secretValue.inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(created.secret);
    await hooks.secretDone.click();
    receiver.secret = rotated;

    // The next real delivery is signed with the new secret; the receiver answers 410 Gone, which disables the endpoint.
    receiver.respond = () => ({ status: 410, body: 'gone' });
    const since = Date.now();
    const review = await postReview(request, await nthAgentId(request, 1), 5);
    const [goneHit] = await hitsOfReview(receiver, review.id);
    expect(goneHit!.headers['x-service-signature']).toBe(sign(rotated, goneHit!.rawBody));
    expect(goneHit!.signatureValid).toBe(true);
    expect(goneHit!.standardValid).toBe(true);
    await expect.poll(async () => (await get()).active).toBe(false);
    await page.getByTestId('endpoints-refresh').click();
    await expect(row.getByTestId('endpoint-disabled-reason')).toHaveText('the receiver answered 410 Gone');
    await quiet(page);
    await screenshotScreen(page, '98-webhooks-disabled-by-410');

    // Enabled again, everything that failed since is sent again: same event, new delivery.
    receiver.respond = () => ({ status: 204 });
    await row.getByTestId('endpoint-enable').click();
    await expect(row).toHaveAttribute('data-active', 'true');
    await hooks.openEndpoint(created.id, 'log');
    const goneRow = hooks.deliveryRows(goneHit!.eventId!);
    await expect(goneRow).toHaveAttribute('data-status', 'failed');
    await page.getByTestId('log-redeliver-failed').click();
    await expect(hooks.redeliverFailedDialog).toBeVisible();
    await expect(page.getByTestId('redeliver-summary')).toContainText('About 1 delivery');
    await quiet(page);
    await page.screenshot({ path: screenshotPath('96-webhooks-redeliver-failed-dialog') });
    await page.getByTestId('redeliver-confirm').click();
    await expect(hooks.message('1 delivery queued again')).toBeVisible();
    await expect(hooks.deliveryRows(goneHit!.eventId!)).toHaveCount(2);
    await expect(hooks.deliveryRows(goneHit!.eventId!).first()).toHaveAttribute('data-status', 'succeeded');
    const both = await hitsOfReview(receiver, review.id, 2);
    expect(both[1]!.eventId).toBe(goneHit!.eventId);
    expect(both[1]!.signatureValid).toBe(true);
    expect(both[1]!.standardValid).toBe(true);

    // Filters: only failed, only review.created, since a minute from now.
    await hooks.select(page.getByTestId('log-filter-status'), 'Failed');
    await expect(page.getByTestId('delivery-row')).toHaveCount(1);
    await expect(page.getByTestId('delivery-row')).toHaveAttribute('data-status', 'failed');
    await page.getByTestId('log-filter-reset').first().click();
    await expect(page.getByTestId('delivery-row')).toHaveCount(2);
    // Keyboard: a focused delivery opens onto its attempts with Enter.
    const goneId = (await goneRow.last().getAttribute('data-delivery-id'))!;
    await hooks.delivery(goneId).focus();
    await page.keyboard.press('Enter');
    await expect(hooks.attempts(goneId).getByTestId('attempt-status')).toHaveText('HTTP 410');
    await expect(hooks.attempts(goneId).getByTestId('attempt-response')).toHaveText('gone');

    // Removing explains that the log goes too.
    await page.getByTestId('detail-remove').click();
    await expect(hooks.removeDialog).toBeVisible();
    await expect(page.getByTestId('remove-log-size')).toHaveText('delivery log (2 deliveries)');
    await expect(hooks.removeDialog).toContainText('To keep the log, disable it instead');
    await quiet(page);
    await page.screenshot({ path: screenshotPath('89-webhooks-remove-confirm') });
    await page.getByTestId('remove-confirm').click();
    await expect(hooks.message('and its delivery log')).toBeVisible();
    await expect(page).not.toHaveURL(/endpoint=/);
    await hooks.expectListLoaded();
    await expect(row).toHaveCount(0);
    const remaining = await trpc<{ endpoints: Endpoint[] }>(request, 'webhooks.list');
    expect(remaining.endpoints.map((endpoint) => endpoint.id)).not.toContain(created.id);
    expect((await trpc<{ total: number }>(request, 'webhooks.deliveries', { endpointId: created.id })).total).toBe(0);

    // The audit log has each step, the moderator's and the dispatcher's own (the 410).
    const audit = await auditOf(request, created.id);
    const actions = audit.map((entry) => `${entry.actor} ${entry.action}`);
    for (const expected of [
      'admin-token webhook.create',
      'admin-token webhook.update',
      'admin-token webhook.disable',
      'admin-token webhook.enable',
      'admin-token webhook.reveal_secret',
      'admin-token webhook.rotate_secret',
      'system:webhooks webhook.disable',
      'admin-token webhook.redeliver_failed',
      'admin-token webhook.delete',
    ]) {
      expect(actions).toContain(expected);
    }
    expect(audit.filter((entry) => entry.action === 'webhook.update')).toHaveLength(2);
    expect(audit.find((entry) => entry.action === 'webhook.redeliver_failed')!.after).toMatchObject({ redelivered: 1, skipped: 0 });
    expect(Date.parse((audit.find((entry) => entry.action === 'webhook.redeliver_failed')!.after as { since: string }).since)).toBeLessThan(
      since,
    );
  });

  test('the first load leaves Refresh idle, and a refresh does not move the list under the pointer', async ({ page }) => {
    const hooks = new WebhooksPage(page);
    const refresh = page.getByTestId('endpoints-refresh');
    const spinner = refresh.getByRole('img', { name: 'loading' });
    const list = hooks.ready.or(hooks.empty);
    const layout = async () => ({ listTop: (await list.boundingBox())!.y, refreshWidth: (await refresh.boundingBox())!.width });

    await hooks.goto();
    await hooks.expectListLoaded();
    // Refresh spins for a reload of a list already shown; a spinner shrinking away after the first load
    // reflowed the toolbar while CI clicked a row's Edit, and the click was lost.
    await expect(spinner).toHaveCount(0);
    const idle = await layout();

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/trpc/webhooks.list**', async (route) => {
      await held;
      await route.continue();
    });
    await refresh.click();
    await expect(spinner).toBeVisible();
    expect(await layout()).toEqual(idle);
    release();
    await expect(spinner).toHaveCount(0);
    expect(await layout()).toEqual(idle);
    await page.unroute('**/trpc/webhooks.list**');
  });

  test('empty, error and missing-endpoint states', async ({ page }) => {
    const hooks = new WebhooksPage(page);

    let restore = await mockProcedures(page, { 'webhooks.list': { data: { endpoints: [], eventKinds: EVENT_KINDS } } });
    await hooks.goto();
    await expect(hooks.empty).toContainText('No webhook endpoints yet');
    await screenshotScreen(page, '89-webhooks-empty');
    await restore();

    restore = await mockProcedures(page, { 'webhooks.list': serverError });
    await hooks.goto();
    await expect(hooks.error).toContainText('could not be loaded');
    await screenshotScreen(page, '89-webhooks-error');
    await restore();
    await hooks.error.getByRole('button', { name: 'Try again' }).click();
    await hooks.expectListLoaded();

    await hooks.goto('?endpoint=whk_doesnotexist');
    await expect(page.getByTestId('endpoint-missing')).toContainText('No such endpoint');
    await screenshotScreen(page, '89-webhooks-missing-endpoint');
    await page.getByRole('link', { name: 'Back to all endpoints' }).click();
    await hooks.expectListLoaded();
  });
});
