import fs from 'node:fs';
import path from 'node:path';
import { expect, test, type APIRequestContext, type APIResponse } from '@playwright/test';
import { createConfig, databasePath } from '../../src-api/config';
import { openDatabase } from '../../src-api/db/client';
import { createServices } from '../../src-api/services';
import { newsletterTokenFromOutbox, subscribeConfirmed } from '../helpers/newsletter';
import { mockProcedures, serverError, settled, trpc } from './pages/console-api';
import { linkFromMail } from './pages/dashboard-page';
import { NewsletterPage } from './pages/newsletter-page';

const adminToken = process.env.AGENTDIR_E2E_ADMIN_TOKEN!;
const shot = (name: string) => path.join('test-results', 'screenshots', name);
const tag = `nl${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const seeded = Array.from({ length: 25 }, (_, i) => `reader-${String(i + 1).padStart(2, '0')}-${tag}@readers.test`);
const publicAddress = `Mixed.Case.${tag}@Readers.Test`;
const waitingAddress = `waiting-${tag}@readers.test`;

const dataDir = () => process.env.AGENTDIR_E2E_DATA_DIR!;

/** Runs `work` with the services on the server's own data dir (the server sees the changes at once, as with any CLI command). */
async function withServices(work: (services: ReturnType<typeof createServices>) => Promise<unknown>): Promise<void> {
  const db = openDatabase(databasePath({ dataDir: dataDir() }));
  try {
    await work(createServices({ db, config: createConfig({ dataDir: dataDir() }) }));
  } finally {
    db.$client.close();
  }
}

/**
 * 25 readers who signed up and followed their confirmation link, through the
 * newsletter service, so that the public endpoint's write limit (20 a minute,
 * shared by every spec) is not spent here.
 */
test.beforeAll(async () => {
  await withServices(async ({ store, newsletter }) => {
    for (const email of seeded) await subscribeConfirmed(store, newsletter, email);
    // One who never follows the link: listed as awaiting confirmation, never exported.
    await newsletter.requestSubscription(waitingAddress);
  });
});

/** POST /api/v1/newsletter, waiting out the shared write limit once if another spec has spent it. */
async function subscribe(request: APIRequestContext, email: string): Promise<APIResponse> {
  const response = await request.post('/api/v1/newsletter', { data: { email } });
  if (response.status() !== 429) return response;
  const retryAfter = Number(response.headers()['retry-after'] ?? '60');
  await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
  return request.post('/api/v1/newsletter', { data: { email } });
}

const subscribedCount = async (request: APIRequestContext) => (await trpc<{ subscribed: number }>(request, 'newsletter.count')).subscribed;

test.describe('newsletter', () => {
  test('subscribers: the count, search with paging, and a search that finds nothing', async ({ page, request }) => {
    test.setTimeout(120_000); // in case the public write limit has to be waited out
    // A reader subscribes through the public API and follows the mailed link; the same address in another case is not a second subscriber.
    expect((await subscribe(request, publicAddress)).status()).toBe(202);
    await withServices(async ({ store, newsletter }) =>
      newsletter.confirm(await newsletterTokenFromOutbox(store, publicAddress, 'confirm')),
    );
    expect((await subscribe(request, publicAddress.toLowerCase())).status()).toBe(202);

    const newsletter = new NewsletterPage(page);
    await newsletter.open(adminToken);
    await newsletter.expectShowing('');
    expect(await newsletter.count(newsletter.subscribedCount)).toBe(await subscribedCount(request));
    await expect(newsletter.rows).toHaveCount(20);
    await page.screenshot({ path: shot('70-newsletter.png'), fullPage: true });

    // Search is case-insensitive and counts only the matches: 25 seeded, 1 waiting, 1 public.
    await newsletter.searchFor(tag.toUpperCase());
    expect(await newsletter.count(newsletter.matchingCount)).toBe(27);
    await expect(newsletter.rows).toHaveCount(20);
    for (const email of await newsletter.emails.allInnerTexts()) expect(email.toLowerCase()).toContain(tag);
    // Newest first: the public subscription is on top, with its original case.
    await expect(newsletter.emails.first()).toHaveText(publicAddress);
    await expect(page).toHaveURL(new RegExp(`[?&]q=${tag.toUpperCase()}`));
    await page.screenshot({ path: shot('71-newsletter-search.png'), fullPage: true });

    await newsletter.goToPage(2);
    await newsletter.expectShowing(tag.toUpperCase(), 2);
    await expect(newsletter.rows).toHaveCount(7);
    await expect(newsletter.emails.last()).toHaveText(seeded[0]!);
    await expect(page).toHaveURL(/[?&]page=2/);

    // A deep link restores search and page.
    await page.reload();
    await newsletter.expectShowing(tag.toUpperCase(), 2);
    await expect(newsletter.rows).toHaveCount(7);

    // The status filter: the one who has not confirmed yet.
    await newsletter.filterStatus('Awaiting confirmation');
    await newsletter.expectShowing(tag.toUpperCase(), 1, 'pending');
    await expect(newsletter.emails).toHaveText([waitingAddress]);
    await expect(page.getByTestId('subscriber-status')).toHaveText(['Awaiting confirmation']);
    await expect(page).toHaveURL(/[?&]status=pending/);
    await page.screenshot({ path: shot('71b-newsletter-pending.png'), fullPage: true });
    await newsletter.filterStatus('All statuses');
    await newsletter.expectShowing(tag.toUpperCase(), 1, '');

    await newsletter.searchFor(`${tag}-nobody`);
    await expect(newsletter.noMatch).toContainText(`No address contains “${tag}-nobody”`);
    await page.screenshot({ path: shot('72-newsletter-no-match.png'), fullPage: true });
    await newsletter.noMatch.getByRole('button', { name: 'Clear the search' }).click();
    await newsletter.expectShowing('');
    await expect(newsletter.search).toHaveValue('');

    // "/" jumps to the search box.
    await page.locator('body').click({ position: { x: 5, y: 700 } });
    await page.keyboard.press('/');
    await expect(newsletter.search).toBeFocused();
  });

  test('Export downloads the confirmed subscribers after a header row, and is audited', async ({ page, request }) => {
    const newsletter = new NewsletterPage(page);
    await newsletter.open(adminToken);
    await newsletter.expectShowing('');

    const download = await newsletter.exportCsv();
    expect(download.suggestedFilename()).toMatch(/^newsletter-subscribers-\d{4}-\d{2}-\d{2}\.csv$/);
    const file = await download.path();
    const csv = fs.readFileSync(file, 'utf8');
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe('email,status,subscribed_at');
    expect(lines.at(-1)).toBe('');
    const rows = lines.slice(1, -1);
    // The confirmed subscribers only (the demo directory also has some who are pending or unsubscribed).
    const listed = await trpc<{ total: number }>(request, 'newsletter.list', { limit: 1, status: 'subscribed' });
    expect(rows).toHaveLength(listed.total);
    const emails = rows.map((row) => row.split(',')[0]);
    for (const email of seeded) expect(emails).toContain(email);
    expect(emails).not.toContain(waitingAddress);
    expect(rows.find((row) => row.startsWith(`${seeded[0]},`))).toMatch(/^[^,]+,subscribed,\d{4}-\d{2}-\d{2}T[\d:.]+Z$/);
    await expect(
      page.locator('.n-message').filter({ hasText: `Exported ${rows.length.toLocaleString('en-US')} confirmed subscribers as CSV` }),
    ).toBeVisible();
    await settled(page);
    await page.screenshot({ path: shot('73-newsletter-exported.png'), fullPage: true });

    const audit = await trpc<{ entries: Array<{ actor: string; after: { rows: number } }> }>(request, 'audit.list', {
      action: 'newsletter.export',
      limit: 1,
    });
    expect(audit.entries[0]).toMatchObject({ actor: 'admin-token', after: { rows: rows.length } });
  });

  test('says so when nobody has subscribed and when the server fails', async ({ page }) => {
    const newsletter = new NewsletterPage(page);
    let unmock = await mockProcedures(page, {
      'newsletter.list': { data: { subscribers: [], page: 1, limit: 20, total: 0 } },
      'newsletter.count': { data: { subscribed: 0, pending: 0, unsubscribed: 0 } },
    });
    await newsletter.open(adminToken);
    await expect(page.getByTestId('newsletter-empty')).toBeVisible();
    await page.screenshot({ path: shot('74-newsletter-empty.png'), fullPage: true });
    await unmock();

    unmock = await mockProcedures(page, { 'newsletter.list': serverError });
    await page.reload();
    await expect(page.getByTestId('newsletter-error')).toContainText('Something went wrong on our side');
    await page.screenshot({ path: shot('75-newsletter-error.png'), fullPage: true });
    await unmock();
    await page.getByTestId('newsletter-error').getByRole('button', { name: 'Try again' }).click();
    await newsletter.expectShowing('');
  });

  test('a reader follows the mailed links: confirm, then unsubscribe with one click on the page', async ({ page, request }) => {
    test.setTimeout(120_000);
    const reader = `reader-links-${tag}@readers.test`;
    expect((await subscribe(request, reader)).status()).toBe(202);

    await page.goto(await linkFromMail(dataDir(), reader, '/dashboard/newsletter/confirm'));
    await expect(page.getByTestId('newsletter-confirm-done')).toContainText(`${reader} will receive the Agent Directory newsletter`);
    // The spent token is gone from the address bar.
    await expect(page).toHaveURL(/\/dashboard\/newsletter\/confirm\?done=1$/);
    await page.screenshot({ path: shot('76-newsletter-confirmed.png'), fullPage: true });
    const listed = await trpc<{ subscribers: Array<{ status: string }> }>(request, 'newsletter.list', { q: reader });
    expect(listed.subscribers.map((s) => s.status)).toEqual(['subscribed']);

    // The same link again: it was single-use.
    const confirmLink = await linkFromMail(dataDir(), reader, '/dashboard/newsletter/confirm');
    await page.goto(confirmLink);
    await expect(page.getByTestId('newsletter-confirm-failed')).toContainText('expired or was already used');

    // The unsubscribe page asks for the click (link scanners open links too), then confirms.
    await page.goto(await linkFromMail(dataDir(), reader, '/dashboard/newsletter/unsubscribe'));
    await expect(page.getByTestId('newsletter-unsubscribe')).toBeVisible();
    expect((await trpc<{ subscribers: Array<{ status: string }> }>(request, 'newsletter.list', { q: reader })).subscribers[0]!.status).toBe(
      'subscribed',
    );
    await page.screenshot({ path: shot('77-newsletter-unsubscribe.png'), fullPage: true });
    await page.getByTestId('newsletter-unsubscribe').click();
    await expect(page.getByTestId('newsletter-unsubscribe-done')).toContainText(`${reader} will not receive the newsletter any more`);
    await page.screenshot({ path: shot('78-newsletter-unsubscribed.png'), fullPage: true });
    expect((await trpc<{ subscribers: Array<{ status: string }> }>(request, 'newsletter.list', { q: reader })).subscribers[0]!.status).toBe(
      'unsubscribed',
    );
  });
});
