import { expect, test } from '@playwright/test';
import { AgentsPage } from './pages/agents-page';
import {
  auditOf,
  importAgents,
  publicApi,
  screenshotPath,
  screenshotScreen,
  signInAsModerator,
  testAgent,
  trpc,
  uniqueSuffix,
} from './pages/directory-fixtures';
import { mockProcedures, serverError, settled } from './pages/console-api';

interface PublicAgent {
  id: string;
  name: string;
  tagline: string;
  type: string;
  capabilities: string[];
  verified: boolean;
  rating: { average: number | null; count: number };
}

const suffix = uniqueSuffix();
const editable = testAgent('Editable', suffix);
const moderated = testAgent('Moderated', suffix);
const contested = testAgent('Contested', suffix);

// Long flows (many screens, API checks, toasts to wait out) on a machine shared with other suites.
test.describe.configure({ timeout: 60_000 });

test.beforeAll(() => {
  importAgents([editable, moderated, contested]);
});

test.beforeEach(async ({ page }) => {
  await signInAsModerator(page);
});

test('browse, search and edit an agent; the public API shows the change', async ({ page, request }) => {
  const agents = new AgentsPage(page);
  await agents.goto();
  await agents.expectLoaded();
  await expect(agents.rows.first()).toBeVisible();
  await expect(agents.mode).toHaveAttribute('data-mode', 'browse');
  await screenshotScreen(page, '30-agents-list');

  // "/" jumps to the search box; a typo still finds the agent.
  await page.locator('body').press('/');
  await expect(agents.search).toBeFocused();
  await agents.searchFor(`Editabel ${suffix}`);
  await expect(agents.mode).toHaveAttribute('data-mode', 'search');
  await expect(agents.row(editable.id)).toBeVisible();
  await page.screenshot({ path: screenshotPath('31-agents-search'), fullPage: true });

  // Keyboard: focus the row, Enter opens it.
  await agents.row(editable.id).focus();
  await page.keyboard.press('Enter');
  await agents.expectDrawerFor(editable.id);
  await expect(agents.drawerTitle).toHaveText(editable.name);
  await settled(page);
  await page.screenshot({ path: screenshotPath('32-agent-drawer-profile') });

  // The form checks what the API would refuse, before sending anything.
  await agents.field('Name').fill('');
  await agents.field('Source URL').fill('ftp://not-a-web-address');
  await agents.save.click();
  await expect(agents.drawer.getByText('Name is required')).toBeVisible();
  await expect(agents.drawer.getByText('Must be an absolute http or https URL')).toBeVisible();
  await page.screenshot({ path: screenshotPath('33-agent-form-validation') });

  const newName = `E2E Edited ${suffix}`;
  await agents.field('Name').fill(newName);
  await agents.field('Source URL').fill(`${editable.source_url}/v2`);
  await agents.field('Tagline').fill('Edited in the moderator console');
  await agents.addTag('capabilities', 'code-review');
  await agents.addTag('categories', 'e2e-edited');
  await expect(agents.tag('capabilities', 'code-review')).toBeVisible();
  await agents.selectType('Research');
  await agents.save.click();
  await expect(agents.message('Changes saved')).toBeVisible();
  await expect(agents.drawerTitle).toHaveText(newName);
  await expect(agents.save).toBeDisabled();
  await expect(agents.message('Changes saved')).toBeHidden();

  const { status, body } = await publicApi<PublicAgent & { categories: string[]; source_url: string }>(request, `/agents/${editable.id}`);
  expect(status).toBe(200);
  expect(body).toMatchObject({
    name: newName,
    tagline: 'Edited in the moderator console',
    type: 'research',
    source_url: `${editable.source_url}/v2`,
  });
  expect(body.capabilities).toEqual(['testing', 'code-review']);
  expect(body.categories).toEqual(['quality', 'e2e-edited']);

  const [entry] = await auditOf(request, editable.id);
  expect(entry).toMatchObject({ action: 'agent.update', actor: 'admin-token', entityType: 'agent' });

  // The table row follows without a reload; the history tab lists the edit.
  await expect(agents.row(editable.id)).toContainText(newName);
  // From the keyboard: the tab takes focus and opens with Enter (Naive UI's tabs do not on their own).
  await agents.tab('History').focus();
  await expect(agents.tab('History')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(agents.tab('History')).toHaveAttribute('aria-selected', 'true');
  await expect(agents.history.getByTestId('agent-history-entry').first()).toContainText('Profile edited');
  await expect(agents.history).toContainText('name, tagline');
  await settled(page);
  await page.screenshot({ path: screenshotPath('34-agent-history') });
});

test('verify, unlist and list again, with confirmation; the public API and the audit log follow', async ({ page, request }) => {
  const agents = new AgentsPage(page);
  await agents.goto(`?agent=${moderated.id}`);
  await agents.expectDrawerFor(moderated.id);
  await expect(agents.verifiedTag).toHaveText('Not verified');

  await agents.verify.click();
  await expect(agents.message('Agent verified')).toBeVisible();
  await expect(agents.verifiedTag).toHaveText('Verified');
  expect((await publicApi<PublicAgent>(request, `/agents/${moderated.id}`)).body.verified).toBe(true);
  await expect(agents.message('Agent verified')).toBeHidden();

  await agents.unlist.click();
  await expect(agents.popconfirm()).toContainText('Unlist');
  await settled(page);
  await page.screenshot({ path: screenshotPath('35-agent-unlist-confirm') });
  await agents.confirmButton('Unlist').click();
  await expect(agents.listedTag).toHaveText('Unlisted');
  await expect(agents.relist).toBeVisible();
  expect((await publicApi(request, `/agents/${moderated.id}`)).status).toBe(404);

  // Unlisted agents are found only with "Include unlisted".
  await agents.closeDrawer();
  await agents.includeUnlisted.click();
  await agents.searchFor(suffix);
  await expect(agents.mode).toHaveAttribute('data-mode', 'browse');
  await expect(agents.row(moderated.id)).toContainText('Unlisted');
  await expect(agents.row(moderated.id)).toContainText('Verified');
  await page.screenshot({ path: screenshotPath('36-agents-unlisted'), fullPage: true });

  await agents.openAgent(moderated.id);
  await agents.relist.click();
  await agents.confirmButton('List again').click();
  await expect(agents.listedTag).toHaveText('Listed');
  expect((await publicApi(request, `/agents/${moderated.id}`)).status).toBe(200);

  await agents.unverify.click();
  await agents.confirmButton('Remove verification').click();
  await expect(agents.verifiedTag).toHaveText('Not verified');
  expect((await publicApi<PublicAgent>(request, `/agents/${moderated.id}`)).body.verified).toBe(false);

  const actions = (await auditOf(request, moderated.id)).map((entry) => `${entry.action} by ${entry.actor}`);
  expect(actions).toEqual([
    'agent.unverify by admin-token',
    'agent.list by admin-token',
    'agent.unlist by admin-token',
    'agent.verify by admin-token',
  ]);
});

test('hide a review as spam: the public rating count drops, and unhide brings it back', async ({ page, request }) => {
  // A demo agent with reviews (the demo directory is seeded at start); nothing else in the suite moderates reviews.
  const { body: list } = await publicApi<{ agents: PublicAgent[] }>(request, '/agents?sort=rating&order=asc&limit=100');
  const reviewed = list.agents.filter((agent) => agent.rating.count >= 2).at(-1)!;
  expect(reviewed, 'a demo agent with two or more reviews').toBeTruthy();
  const before = reviewed.rating.count;
  const { body: reviews } = await publicApi<{ reviews: Array<{ id: string }> }>(request, `/agents/${reviewed.id}/reviews?limit=1`);
  const spamId = reviews.reviews[0]!.id;

  const agents = new AgentsPage(page);
  await agents.goto(`?agent=${reviewed.id}`);
  await agents.expectDrawerFor(reviewed.id);
  await expect(agents.rating).toHaveAttribute('data-count', String(before));
  await agents.tab(/^Reviews/).click();
  await expect(agents.review(spamId)).toBeVisible();
  await settled(page);
  await page.screenshot({ path: screenshotPath('37-agent-reviews') });

  await agents.review(spamId).getByTestId('review-hide').click();
  await expect(agents.popconfirm()).toContainText('Hide this review?');
  await settled(page);
  await page.screenshot({ path: screenshotPath('38-agent-hide-review-confirm') });
  await agents.confirmButton('Hide').click();
  await expect(agents.review(spamId)).toHaveAttribute('data-hidden', 'true');
  await expect(agents.review(spamId).getByTestId('review-hidden-tag')).toBeVisible();
  // The rating summary follows, and the agent's newer version is taken in (no stale warning).
  await expect(agents.rating).toHaveAttribute('data-count', String(before - 1));
  await expect(agents.stale).toBeHidden();
  await page.screenshot({ path: screenshotPath('39-agent-review-hidden') });

  const after = await publicApi<PublicAgent>(request, `/agents/${reviewed.id}`);
  expect(after.body.rating.count).toBe(before - 1);
  const visible = await publicApi<{ reviews: Array<{ id: string }> }>(request, `/agents/${reviewed.id}/reviews?limit=100`);
  expect(visible.body.reviews.map((review) => review.id)).not.toContain(spamId);
  expect((await auditOf(request, spamId))[0]).toMatchObject({ action: 'review.hide', actor: 'admin-token', entityType: 'review' });

  await agents.review(spamId).getByTestId('review-unhide').click();
  await expect(agents.review(spamId)).toHaveAttribute('data-hidden', 'false');
  await expect(agents.rating).toHaveAttribute('data-count', String(before));
  expect((await publicApi<PublicAgent>(request, `/agents/${reviewed.id}`)).body.rating.count).toBe(before);
  expect((await auditOf(request, spamId))[0]).toMatchObject({ action: 'review.unhide', actor: 'admin-token' });

  // Still editable after our own review changes bumped the version.
  await agents.tab('Profile').click();
  await expect(agents.save).toBeDisabled();
});

test('an edit over someone else’s change is refused with a warning, and Reload shows theirs', async ({ page, request }) => {
  const agents = new AgentsPage(page);
  await agents.goto(`?agent=${contested.id}`);
  await agents.expectDrawerFor(contested.id);

  // Another moderator saves first.
  const current = await trpc<{ version: number }>(request, 'agents.get', { id: contested.id });
  await trpc(
    request,
    'agents.update',
    { id: contested.id, patch: { tagline: 'Changed by another moderator' }, expectedVersion: current.version },
    'mutation',
  );

  await agents.field('Name').fill(`E2E Too Late ${suffix}`);
  await agents.save.click();
  await expect(agents.stale).toBeVisible();
  await expect(agents.stale).toContainText('Changed by someone else');
  await expect(agents.message('changed by someone else')).toBeVisible();
  await expect(agents.save).toBeDisabled();
  await expect(agents.verify).toBeDisabled();
  await settled(page);
  await page.screenshot({ path: screenshotPath('40-agent-stale-warning') });
  expect((await publicApi<PublicAgent>(request, `/agents/${contested.id}`)).body.name).toBe(contested.name);

  await agents.staleReload.click();
  await expect(agents.stale).toBeHidden();
  await expect(agents.field('Tagline')).toHaveValue('Changed by another moderator');
  await expect(agents.field('Name')).toHaveValue(contested.name);

  await agents.field('Name').fill(`E2E Second Try ${suffix}`);
  await agents.save.click();
  await expect(agents.message('Changes saved')).toBeVisible();
  expect((await publicApi<PublicAgent>(request, `/agents/${contested.id}`)).body).toMatchObject({
    name: `E2E Second Try ${suffix}`,
    tagline: 'Changed by another moderator',
  });
});

test('empty and error states', async ({ page }) => {
  const agents = new AgentsPage(page);
  await agents.goto();
  await agents.expectLoaded();

  await agents.includeUnlisted.click();
  await agents.searchFor(`no-such-agent-${suffix}`);
  await expect(agents.empty).toBeVisible();
  await expect(agents.empty).toContainText('No agent matches these filters.');
  await page.screenshot({ path: screenshotPath('41-agents-empty'), fullPage: true });
  await agents.empty.getByRole('button', { name: 'Clear filters' }).click();
  await expect(agents.rows.first()).toBeVisible();

  const restore = await mockProcedures(page, { 'agents.browse': serverError });
  await page.getByTestId('agents-refresh').click();
  await expect(agents.error).toBeVisible();
  await expect(agents.error).toContainText('Something went wrong on our side');
  await page.screenshot({ path: screenshotPath('42-agents-error'), fullPage: true });
  await restore();
  await agents.error.getByRole('button', { name: 'Try again' }).click();
  await expect(agents.error).toBeHidden();
  await expect(agents.rows.first()).toBeVisible();
});
