import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { AuditLogPage } from './pages/audit-log-page';
import { mockProcedures, serverError, settled, trpc } from './pages/console-api';
import { expectRelativeTime } from './pages/date-time';

const adminToken = process.env.AGENTDIR_E2E_ADMIN_TOKEN!;
const shot = (name: string) => path.join('test-results', 'screenshots', name);
const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

interface Key {
  id: string;
  name: string;
  revoked_at: string | null;
}
interface AuditPage {
  entries: Array<{ id: string; actor: string; action: string; entityType: string; entityId: string }>;
  total: number;
}

const issueKey = (request: APIRequestContext, name: string) => trpc<Key & { key: string }>(request, 'keys.create', { name }, 'mutation');
const revokeKey = (request: APIRequestContext, id: string) => trpc<Key>(request, 'keys.revoke', { id }, 'mutation');
const auditList = (request: APIRequestContext, input: Record<string, unknown>) => trpc<AuditPage>(request, 'audit.list', input);

/** `npm run cli -- keys create` on the server's data dir: an action by another actor ("cli"). */
function issueKeyWithCli(name: string): Key {
  const output = execFileSync(
    process.execPath,
    ['--import', 'tsx', 'src-api/cli.ts', 'keys', 'create', '--name', name, '--data-dir', process.env.AGENTDIR_E2E_DATA_DIR!],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return JSON.parse(output.trim().split('\n').at(-1)!) as Key;
}

test.describe('audit log', () => {
  test('shows the issue and revoke of a key with actor and before/after, and the diff in a drawer', async ({ page, request }) => {
    const key = await issueKey(request, `Audited key ${unique()}`);
    await revokeKey(request, key.id);
    const audit = new AuditLogPage(page);

    await audit.open(adminToken);
    await expect(audit.row(key.id)).toHaveCount(0); // rows are entries; the key's are found by entity below
    await expect(audit.rows.first()).toBeVisible();
    await page.screenshot({ path: shot('80-audit-log.png'), fullPage: true });

    // The key's two entries, newest first, by the admin.
    await audit.entityIdFilter.fill(key.id);
    await audit.expectFiltered(`"q":"${key.id}"`);
    await expect(audit.column('audit-action')).toHaveText(['key.revoke', 'key.create']);
    await expect(audit.column('audit-actor')).toHaveText(['admin-token', 'admin-token']);
    await expect(audit.column('audit-changes')).toHaveText(['revoked_at', 'Created with 6 fields']);
    await expect(page.getByTestId('audit-entity-link')).toHaveText([key.id, key.id]);
    // When: relative, the absolute time (to the second) in the tooltip.
    await expectRelativeTime(audit.column('audit-when').first(), { seconds: true });

    // The revoke in the drawer: revoked_at changed from null, the rest unchanged.
    await audit.rows.first().click();
    await expect(audit.drawer).toBeVisible();
    await expect(audit.drawer.getByTestId('drawer-action')).toHaveText('key.revoke');
    await expect(audit.drawer.getByTestId('drawer-actor')).toHaveText('admin-token');
    await expect(audit.drawer.getByTestId('drawer-entity-link')).toHaveText(key.id);
    await expectRelativeTime(audit.drawer.getByTestId('drawer-when').locator('time'), { seconds: true });
    await expect(audit.diffRow('revoked_at')).toHaveAttribute('data-kind', 'changed');
    await expect(audit.diffRow('revoked_at').getByTestId('diff-before')).toHaveText('null');
    await expect(audit.diffRow('revoked_at').getByTestId('diff-after')).toHaveText(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    await expect(audit.diffRow('name')).toHaveAttribute('data-kind', 'unchanged');
    await expect(audit.drawer.getByTestId('diff-summary')).toHaveText(/1 changed\s*5 unchanged/);
    await expect(page).toHaveURL(/[?&]entry=aud_/);
    await settled(page);
    await page.screenshot({ path: shot('81-audit-drawer-diff.png') });

    await audit.drawer.getByTestId('diff-only-changed').click();
    await expect(audit.diffRows).toHaveCount(1);
    await audit.drawer.locator('.n-tabs-tab', { hasText: 'Raw JSON' }).click();
    await expect(audit.drawer.getByTestId('raw-before')).toContainText('"revoked_at": null');
    await expect(audit.drawer.getByTestId('raw-after')).toContainText(`"id": "${key.id}"`);
    await settled(page);
    await page.screenshot({ path: shot('82-audit-drawer-raw.png') });
    await audit.drawer.locator('.n-tabs-tab', { hasText: 'Changes' }).click();

    // The keyboard steps to the older entry: the issue, where every field is new.
    await page.keyboard.press('ArrowDown');
    await expect(audit.drawer.getByTestId('drawer-action')).toHaveText('key.create');
    await expect(audit.drawer.locator('[data-testid="diff-row"]:not([data-kind="added"])')).toHaveCount(0);
    await expect(audit.diffRow('revoked_at').getByTestId('diff-after')).toHaveText('null');
    await expect(audit.drawer.getByTestId('drawer-older')).toBeDisabled();
    await settled(page);
    await page.screenshot({ path: shot('83-audit-drawer-create.png') });
    await page.keyboard.press('ArrowUp');
    await expect(audit.drawer.getByTestId('drawer-action')).toHaveText('key.revoke');

    // A deep link reopens the same entry.
    await page.reload();
    await expect(audit.drawer.getByTestId('drawer-action')).toHaveText('key.revoke');
    await page.keyboard.press('Escape');
    await expect(audit.drawer).toBeHidden();
    await expect(page).not.toHaveURL(/entry=/);

    // The entity id leads to the key on its screen.
    await page.getByTestId('audit-entity-link').first().click();
    await expect(page).toHaveURL(new RegExp(`/console/api-keys\\?id=${key.id}$`));
    await expect(page.locator(`[data-testid="key-row"][data-key-id="${key.id}"]`)).toHaveClass(/highlighted/);
  });

  test('an agent edit shows the changed field, and its id links to the agent', async ({ page, request }) => {
    const { agents } = await (await request.get('/api/v1/agents?limit=1&sort=name&order=desc')).json();
    const agentId: string = agents[0].id;
    const original = await trpc<{ tagline: string; version: number }>(request, 'agents.get', { id: agentId });
    const edited = `Edited for the audit log ${unique()}`;
    const after = await trpc<{ version: number }>(
      request,
      'agents.update',
      { id: agentId, patch: { tagline: edited }, expectedVersion: original.version },
      'mutation',
    );
    // Put the agent back as it was: other specs read the directory.
    await trpc(request, 'agents.update', { id: agentId, patch: { tagline: original.tagline }, expectedVersion: after.version }, 'mutation');

    const audit = new AuditLogPage(page);
    await audit.open(adminToken, `?q=${agentId}&action=agent.update`);
    await audit.expectFiltered(`"q":"${agentId}"`);
    await expect(audit.column('audit-action')).toHaveText(['agent.update', 'agent.update']);
    // Rows name the agent beside its id.
    await expect(audit.column('audit-entity-name')).toHaveText([agents[0].name, agents[0].name]);
    await audit.rows.nth(1).click();
    await expect(audit.diffRow('tagline')).toHaveAttribute('data-kind', 'changed');
    await expect(audit.diffRow('tagline').getByTestId('diff-before')).toHaveText(original.tagline);
    await expect(audit.diffRow('tagline').getByTestId('diff-after')).toHaveText(edited);
    await settled(page);
    await page.screenshot({ path: shot('86-audit-drawer-agent.png') });
    await audit.drawer.getByTestId('drawer-entity-link').click();
    await expect(page).toHaveURL(new RegExp(`/console/agents\\?id=${agentId}$`));
  });

  test('filters by actor, action, entity type, entity id and time range, and pages', async ({ page, request }) => {
    test.setTimeout(60_000);
    const tag = unique();
    // 22 entries by the admin, enough for a second page…
    const keys: Key[] = [];
    for (let i = 0; i < 11; i++) keys.push(await issueKey(request, `Filter key ${tag} ${i}`));
    for (const key of keys) await revokeKey(request, key.id);
    // …and one by another actor.
    const cliKey = issueKeyWithCli(`CLI key ${tag}`);
    await revokeKey(request, cliKey.id);

    const audit = new AuditLogPage(page);
    await audit.open(adminToken);

    // Actor.
    await audit.choose('actor', 'cli');
    await audit.expectFiltered('"actor":"cli"');
    await expect(page).toHaveURL(/[?&]actor=cli/);
    const byCli = await auditList(request, { actor: 'cli', limit: 100 });
    await expect(audit.ready).toHaveAttribute('data-total', String(byCli.total));
    for (const actor of await audit.column('audit-actor').allInnerTexts()) expect(actor).toBe('cli');
    await expect(audit.rows.filter({ hasText: cliKey.id })).toHaveCount(1);
    await page.screenshot({ path: shot('84-audit-filtered.png'), fullPage: true });

    // Action and entity type, together.
    await audit.reset.click();
    await audit.expectFiltered('"actor":null,"action":null');
    await audit.choose('action', 'key.revoke');
    await audit.expectFiltered('"action":"key.revoke"');
    await audit.choose('entity-type', 'API key');
    await audit.expectFiltered('"entityType":"api_key"');
    const revokes = await auditList(request, { action: 'key.revoke', entityType: 'api_key' });
    await expect(audit.ready).toHaveAttribute('data-total', String(revokes.total));
    for (const action of await audit.column('audit-action').allInnerTexts()) expect(action).toBe('key.revoke');

    // Entity id: any part of it.
    await audit.entityIdFilter.fill(cliKey.id.slice(4));
    await audit.expectFiltered(`"q":"${cliKey.id.slice(4)}"`);
    await expect(audit.rows).toHaveCount(1);
    await expect(audit.column('audit-actor')).toHaveText(['admin-token']);

    // Time range: a window with nothing in it, then the last hour.
    await audit.open(adminToken, '?from=2001-01-01T00:00:00.000Z&to=2001-01-02T00:00:00.000Z');
    await expect(audit.noMatch).toBeVisible();
    await page.screenshot({ path: shot('85-audit-no-match.png'), fullPage: true });
    await audit.noMatch.getByRole('button', { name: 'Clear the filters' }).click();
    await audit.expectFiltered('"range":null');
    await audit.chooseRangeShortcut('Last hour');
    await audit.expectFiltered('"range":[');
    await expect(page).toHaveURL(/[?&]from=.*&to=/);
    await expect(audit.rows.filter({ hasText: cliKey.id }).first()).toBeVisible();
    await settled(page);

    // Paging: page 2 holds the next entries, and the URL keeps the page.
    await audit.reset.click();
    await audit.expectFiltered('"range":null');
    const firstPage = await audit.rows.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-entry-id')));
    expect(firstPage).toHaveLength(20);
    await page.locator('.n-pagination-item', { hasText: /^2$/ }).click();
    await audit.expectFiltered(',2,20]');
    await expect(page).toHaveURL(/[?&]page=2/);
    const secondPage = await audit.rows.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-entry-id')));
    expect(secondPage.length).toBeGreaterThan(0);
    expect(secondPage.filter((id) => firstPage.includes(id))).toEqual([]);
    const expected = await auditList(request, { page: 2, limit: 20 });
    expect(secondPage).toEqual(expected.entries.map((entry) => entry.id));
  });

  test('says so when the log is empty and when the server fails', async ({ page }) => {
    const audit = new AuditLogPage(page);
    let unmock = await mockProcedures(page, {
      'audit.list': { data: { entries: [], page: 1, limit: 20, total: 0 } },
      'audit.facets': { data: { actors: [], actions: [], entityTypes: [] } },
    });
    await page.goto('/console/audit-log');
    await audit.signInIfAsked(adminToken);
    await expect(page.getByTestId('audit-empty')).toBeVisible();
    await page.screenshot({ path: shot('87-audit-empty.png'), fullPage: true });
    await unmock();

    unmock = await mockProcedures(page, { 'audit.list': serverError });
    await page.reload();
    await expect(page.getByTestId('audit-error')).toContainText('Something went wrong on our side');
    await page.screenshot({ path: shot('88-audit-error.png'), fullPage: true });
    await unmock();
    await page.getByTestId('audit-error').getByRole('button', { name: 'Try again' }).click();
    await audit.expectSettled();
  });
});
