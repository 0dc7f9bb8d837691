import path from 'node:path';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { mockProcedures, serverError, settled, trpc } from './pages/console-api';
import { ApiKeysPage } from './pages/api-keys-page';
import { AuditLogPage } from './pages/audit-log-page';

const adminToken = process.env.AGENTDIR_E2E_ADMIN_TOKEN!;
const screenshots = path.join('test-results', 'screenshots');
const shot = (name: string) => path.join(screenshots, name);
const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

interface KeySummary {
  id: string;
  name: string;
  prefix: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

const listKeys = async (request: APIRequestContext) => (await trpc<{ keys: KeySummary[] }>(request, 'keys.list')).keys;

test.describe('API keys', () => {
  test('a key issued in the console works against the public API until it is revoked in the console', async ({
    page,
    request,
    context,
    baseURL,
  }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL! });
    const keys = new ApiKeysPage(page);
    const name = `Partner dashboard ${unique()}`;

    await keys.open(adminToken);
    await keys.expectLoaded();

    // The dialog checks the name before anything is issued.
    await keys.issueButton.click();
    await expect(keys.dialog).toBeVisible();
    await expect(keys.nameInput).toBeFocused();
    await settled(page);
    await page.screenshot({ path: shot('61-api-keys-issue-dialog.png') });
    await keys.submit.click();
    await expect(keys.dialog.getByText('Give the key a name')).toBeVisible();
    await page.screenshot({ path: shot('62-api-keys-issue-validation.png') });

    // Issued: the key is shown once, with the warning and a working copy button.
    await keys.nameInput.fill(name);
    await keys.nameInput.press('Enter');
    await expect(keys.issuedKey).toBeVisible();
    const key = await keys.issuedKeyValue.inputValue();
    expect(key).toMatch(/^adk_[A-Za-z0-9_-]{20,}$/);
    await expect(keys.issuedWarning).toContainText("you won't see this key again");
    await expect(page.getByTestId('issued-key-example')).toContainText(`X-API-Key: ${key}`);
    await keys.copyButton.click();
    await expect(keys.copyButton).toHaveText('Copied');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
    await settled(page);
    await page.screenshot({ path: shot('63-api-keys-issued-once.png') });
    // Escape does not dismiss the key by accident; only the explicit button does.
    await page.keyboard.press('Escape');
    await expect(keys.issuedKey).toBeVisible();
    await keys.done.click();
    await expect(keys.dialog).toBeHidden();

    const row = keys.row(name);
    await expect(row).toBeVisible();
    await expect(keys.status(row)).toHaveText('Active');
    await expect(row.getByTestId('key-prefix')).toHaveText(`${key.slice(0, 10)}…`);
    await expect(row).toContainText('Never');
    // The key itself is nowhere on the screen any more, nor in what the console API lists.
    await expect(page.getByText(key)).toHaveCount(0);
    const issued = (await listKeys(request)).find((candidate) => candidate.name === name)!;
    expect(JSON.stringify(issued)).not.toContain(key);

    // The public API takes the key. (The e2e server runs with --rate-limit off, so there is no policy header
    // here; test/api/rate-limits.test.ts proves a key gets the keyed policy.)
    const ok = await request.get('/api/v1/agents?limit=1', { headers: { 'X-API-Key': key } });
    expect(ok.status()).toBe(200);
    expect((await ok.json()).agents).toHaveLength(1);

    // Its use shows up in the console.
    await page.reload();
    await keys.expectLoaded();
    await expect(row).not.toContainText('Never');
    await page.screenshot({ path: shot('60-api-keys.png'), fullPage: true });

    // Revoked in the console, with a confirmation first.
    await row.getByTestId('revoke-key').click();
    await expect(page.getByTestId('revoke-confirm')).toContainText(`Revoke “${name}”?`);
    await settled(page);
    await page.screenshot({ path: shot('64-api-keys-revoke-confirm.png') });
    await page.getByTestId('confirm-revoke').click();
    await expect(keys.status(row)).toContainText('Revoked');
    await expect(page.locator('.n-message').filter({ hasText: `Revoked “${name}”` })).toBeVisible();
    await expect(row.getByTestId('revoke-key')).toHaveCount(0);
    await page.screenshot({ path: shot('65-api-keys-revoked.png'), fullPage: true });

    // …and the public API refuses it at once: never a silent downgrade to anonymous.
    const refused = await request.get('/api/v1/agents?limit=1', { headers: { 'X-API-Key': key } });
    expect(refused.status()).toBe(401);
    expect(refused.headers()['content-type']).toContain('application/problem+json');
    expect(await refused.json()).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect((await listKeys(request)).find((candidate) => candidate.id === issued.id)?.revoked_at).toMatch(/Z$/);

    // The key's history: issued and revoked by the admin, newest first.
    await row.getByTestId('key-history').click();
    const audit = new AuditLogPage(page);
    await expect(page).toHaveURL(new RegExp(`/console/audit-log\\?q=${issued.id}`));
    await audit.expectFiltered(`"q":"${issued.id}"`);
    await expect(audit.column('audit-action')).toHaveText(['key.revoke', 'key.create']);
    await expect(audit.column('audit-actor')).toHaveText(['admin-token', 'admin-token']);
  });

  test('the list filters by name and status, marks a linked key, and shows its empty and error states', async ({ page, request }) => {
    const tag = unique();
    const active = await trpc<KeySummary & { key: string }>(request, 'keys.create', { name: `Filter active ${tag}` }, 'mutation');
    const revoked = await trpc<KeySummary>(request, 'keys.create', { name: `Filter revoked ${tag}` }, 'mutation');
    await trpc(request, 'keys.revoke', { id: revoked.id }, 'mutation');
    const keys = new ApiKeysPage(page);

    try {
      // A link from the audit log marks the key.
      await keys.open(adminToken, `?id=${active.id}`);
      await keys.expectLoaded();
      await expect(keys.rowById(active.id)).toHaveClass(/highlighted/);

      await keys.search.fill(tag);
      await expect(page.getByTestId('key-row')).toHaveCount(2);
      await page.getByTestId('keys-status-filter').getByText('Active', { exact: true }).click();
      await expect(page.getByTestId('key-name')).toHaveText([`Filter active ${tag}`]);
      await page.getByTestId('keys-status-filter').getByText('Revoked', { exact: true }).click();
      await expect(page.getByTestId('key-name')).toHaveText([`Filter revoked ${tag}`]);
      await keys.search.fill(`${tag}-nothing`);
      await expect(page.getByTestId('keys-no-match')).toBeVisible();
      // Counts agree with the API.
      const all = await listKeys(request);
      const activeCount = all.filter((key) => key.revoked_at === null).length;
      await expect(keys.counts).toHaveText(`${activeCount} active · ${all.length - activeCount} revoked`);
    } finally {
      // Nothing stays active: other screens' tests count active keys.
      await trpc(request, 'keys.revoke', { id: active.id }, 'mutation');
    }

    // No keys at all (as on a fresh install), then a failing server: the screen says so.
    let unmock = await mockProcedures(page, { 'keys.list': { data: { keys: [] } } });
    await page.reload();
    await expect(page.getByTestId('keys-empty')).toBeVisible();
    await page.screenshot({ path: shot('66-api-keys-empty.png'), fullPage: true });
    await unmock();

    unmock = await mockProcedures(page, { 'keys.list': serverError });
    await page.reload();
    await expect(page.getByTestId('keys-error')).toContainText('Something went wrong on our side');
    await page.screenshot({ path: shot('67-api-keys-error.png'), fullPage: true });
    await unmock();
    await page.getByTestId('keys-error').getByRole('button', { name: 'Try again' }).click();
    await expect(keys.ready).toBeVisible();
  });
});
