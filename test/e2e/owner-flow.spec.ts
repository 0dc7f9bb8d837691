import http from 'node:http';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { expectAccessible } from './pages/accessibility';
import { DashboardPage, linkFromMail } from './pages/dashboard-page';
import { importAgents, signInAsModerator, testAgent, trpc, uniqueSuffix } from './pages/directory-fixtures';

/**
 * An owner, end to end: claims a GitHub-hosted agent from the dashboard, publishes the proof on
 * the stand-in forge (the e2e server reads github.com's raw files from AGENTDIR_E2E_FORGE_PORT),
 * checks, edits the tagline, deprecates the agent and asks for a new name, which a moderator
 * approves in the console.
 */

const suffix = uniqueSuffix();
const repoOwner = `e2e-owner-${suffix}`;
const agent = { ...testAgent('Owned Helper', suffix), source_url: `https://github.com/${repoOwner}/owned-helper` };
const shots = path.join('test-results', 'screenshots');

/** What the stand-in forge serves: the claim file's content per repository path. */
const published = new Map<string, string>();
let forge: http.Server;

test.beforeAll(async () => {
  importAgents([agent]);
  forge = http.createServer((request, response) => {
    const body = published.get(request.url ?? '');
    if (body === undefined) response.writeHead(404, { 'content-type': 'text/plain' }).end('404: Not Found');
    else response.writeHead(200, { 'content-type': 'text/plain' }).end(body);
  });
  await new Promise<void>((resolve) => forge.listen(Number(process.env.AGENTDIR_E2E_FORGE_PORT), '127.0.0.1', resolve));
});
test.afterAll(async () => {
  forge.closeAllConnections();
  await new Promise<void>((resolve) => forge.close(() => resolve()));
});

test('an owner claims a GitHub-hosted agent, proves it on the forge, edits, deprecates and renames it with a moderator', async ({
  page,
  browser,
  request,
}) => {
  test.setTimeout(150_000);
  const dashboard = new DashboardPage(page);
  const email = `owner-${suffix}@example.com`;
  const password = 'the owner has a long passphrase';
  await dashboard.signUp({ name: 'Olive Owner', email, password });
  await dashboard.verifyWith(await linkFromMail(process.env.AGENTDIR_E2E_DATA_DIR!, email, '/dashboard/verify-email'));
  await dashboard.signIn(email, password);
  await expect(dashboard.accountName).toHaveText('Olive Owner');

  // Claim from the dashboard, by the address of the public profile.
  await dashboard.open('claims');
  await page.getByTestId('claim-agent').locator('input').fill(`http://127.0.0.1/api/v1/agents/${agent.id}`);
  await page.getByTestId('claim-submit').click();
  const card = page.getByTestId('claim-card').filter({ hasText: agent.id });
  await expect(card).toHaveAttribute('data-status', 'pending');
  // The proof lives in the repository (the forge's raw file of its default branch), never on github.com itself.
  const fileUrl = `/gh/${repoOwner}/owned-helper/HEAD/.well-known/agent-directory-claim.txt`;
  await expect(card.getByTestId('claim-url').first()).toContainText(fileUrl);
  const token = (await card.getByTestId('claim-token').textContent())!.trim();
  await expectAccessible(page, 'dashboard-claim-pending');

  // Checked before the file is published: the problem says what was missing.
  await card.getByTestId('claim-check').click();
  await expect(card.getByTestId('claim-check-problem')).toContainText('404');
  await page.screenshot({ path: path.join(shots, 'owner-01-claim-not-yet.png'), fullPage: true });

  published.set(fileUrl, `${token}\n`);
  await card.getByTestId('claim-check').click();
  await expect(card).toHaveAttribute('data-status', 'verified');
  // verified_by is on the claim itself (the generated Claim type), not in its verification.
  await expect(card).toContainText('Verified automatically. The agent is listed under Your agents.');
  const profile = await (await request.get(`/api/v1/agents/${agent.id}`)).json();
  expect(profile).toMatchObject({ verified: true, owner: { name: 'Olive Owner' } });

  // A user reviews the agent on the public API, before the owner looks.
  const reviewed = await request.post(`/api/v1/agents/${agent.id}/reviews`, {
    data: { rating: 3, comment: 'Useful, but the setup guide is out of date.', reviewer_name: 'Rae Reviewer' },
  });
  expect(reviewed.status(), await reviewed.text()).toBe(201);
  const review = await reviewed.json();

  // Manage the listing: a new tagline shows at once.
  await dashboard.open('agents');
  const row = page.locator(`[data-testid="agent-row"][data-agent-id="${agent.id}"]`);
  await row.getByTestId('agent-manage').click();
  const dialog = page.getByTestId('owned-agent-dialog');
  await expect(dialog).toBeVisible();
  await dialog.getByTestId('owned-agent-tagline').locator('input').fill('Helps owners keep their listings fresh');
  await expectAccessible(page, 'dashboard-owned-agent-dialog');
  await page.screenshot({ path: path.join(shots, 'owner-02-manage.png') });
  await dialog.getByTestId('owned-agent-save').click();
  await expect(dialog).toBeHidden();
  expect((await (await request.get(`/api/v1/agents/${agent.id}`)).json()).tagline).toBe('Helps owners keep their listings fresh');

  // Deprecate it, with a message.
  await row.getByTestId('agent-manage').click();
  await dialog.getByTestId('owned-agent-status').getByText('Deprecated', { exact: true }).click();
  await dialog.getByTestId('owned-agent-status-message').locator('input').fill('Use Owned Helper 2 instead');
  await dialog.getByTestId('owned-agent-status-save').click();
  await expect(dialog).toBeHidden();
  expect(await (await request.get(`/api/v1/agents/${agent.id}`)).json()).toMatchObject({
    status: 'deprecated',
    status_message: 'Use Owned Helper 2 instead',
  });
  await expect(row).toContainText('deprecated');

  // A new name waits for a moderator.
  const newName = `Owned Helper Two ${suffix}`;
  await row.getByTestId('agent-manage').click();
  await dialog.getByTestId('owned-agent-name').locator('input').fill(newName);
  await expect(dialog.getByTestId('owned-agent-review-note')).toBeVisible();
  await expect(dialog.getByTestId('owned-agent-save')).toHaveText('Send for review');
  await dialog.getByTestId('owned-agent-save').click();
  await expect(dialog).toBeHidden();
  expect((await (await request.get(`/api/v1/agents/${agent.id}`)).json()).name).toBe(agent.name);
  // The owner sees the request waiting in the dashboard.
  const ownRequests = page.getByTestId('own-edit-request');
  const renameId = (await ownRequests.filter({ hasText: newName }).getAttribute('data-id'))!;
  const renameRequest = page.locator(`[data-testid="own-edit-request"][data-id="${renameId}"]`);
  await expect(renameRequest.getByTestId('edit-request-status')).toHaveText('waiting for a moderator');
  await expect(renameRequest.getByTestId('edit-request-change')).toContainText(`Name: ${agent.name} → ${newName}`);

  // The moderator approves it in the console.
  const moderator = await browser.newPage();
  await signInAsModerator(moderator);
  await moderator.goto('/console/edit-requests');
  const requestCard = moderator.getByTestId('edit-request').filter({ hasText: newName });
  await expect(requestCard.getByTestId('edit-request-owner')).toContainText(email);
  await requestCard.getByTestId('edit-request-approve').click();
  await expect(requestCard.getByTestId('edit-request-status')).toHaveText('approved');
  await moderator.close();
  expect((await (await request.get(`/api/v1/agents/${agent.id}`)).json()).name).toBe(newName);

  // A source move turned down with a reason: the owner reads both decisions in the dashboard.
  await row.getByTestId('agent-manage').click();
  await dialog.getByTestId('owned-agent-source').locator('input').fill(`https://github.com/someone-else/owned-helper`);
  await dialog.getByTestId('owned-agent-save').click();
  await expect(dialog).toBeHidden();
  await expect(ownRequests.filter({ hasText: 'someone-else' })).toHaveAttribute('data-status', 'pending');
  const moveId = (await ownRequests.filter({ hasText: 'someone-else' }).getAttribute('data-id'))!;
  const moveRequest = page.locator(`[data-testid="own-edit-request"][data-id="${moveId}"]`);
  await trpc(request, 'editRequests.reject', { id: moveId, reason: 'That repository belongs to another organisation' }, 'mutation');
  await page.reload();
  await expect(renameRequest.getByTestId('edit-request-status')).toHaveText('approved');
  await expect(moveRequest.getByTestId('edit-request-status')).toHaveText('rejected');
  await expect(moveRequest.getByTestId('edit-request-reason')).toHaveText('That repository belongs to another organisation');
  await expectAccessible(page, 'dashboard-own-edit-requests');
  await page.screenshot({ path: path.join(shots, 'owner-05-edit-requests.png'), fullPage: true });

  // The owner answers the review from the dashboard; the public list shows the reply with it.
  await row.getByTestId('agent-reviews').click();
  const reviews = page.getByTestId('agent-reviews-dialog');
  const item = reviews.locator(`[data-testid="agent-review"][data-review-id="${review.id}"]`);
  await expect(item).toContainText('the setup guide is out of date');
  await expect(item).toContainText('Rae Reviewer');
  await expect(item.getByTestId('agent-review-reply')).toHaveCount(0);
  await item.getByTestId('agent-review-reply-start').click();
  await expect(item.getByTestId('agent-review-reply-send')).toBeDisabled();
  await item.getByTestId('agent-review-reply-input').locator('textarea').fill('Thanks! The guide is rewritten for v2.');
  await expectAccessible(page, 'dashboard-agent-reviews-reply');
  await page.screenshot({ path: path.join(shots, 'owner-03-reply.png') });
  await item.getByTestId('agent-review-reply-send').click();
  await expect(item.getByTestId('agent-review-reply')).toContainText('Thanks! The guide is rewritten for v2.');
  const publicReviews = async () => (await (await request.get(`/api/v1/agents/${agent.id}/reviews`)).json()).reviews;
  expect((await publicReviews()).find((entry: { id: string }) => entry.id === review.id).reply).toMatchObject({
    body: 'Thanks! The guide is rewritten for v2.',
  });

  // Replying again replaces the reply.
  await item.getByTestId('agent-review-reply-start').click();
  await expect(item.getByTestId('agent-review-reply-input').locator('textarea')).toHaveValue('Thanks! The guide is rewritten for v2.');
  await item.getByTestId('agent-review-reply-input').locator('textarea').fill('Thanks! The v2 guide is at /docs/setup.');
  await item.getByTestId('agent-review-reply-send').click();
  await expect(item.getByTestId('agent-review-reply')).toContainText('/docs/setup');
  await page.screenshot({ path: path.join(shots, 'owner-04-replied.png') });
  expect((await publicReviews()).find((entry: { id: string }) => entry.id === review.id).reply.body).toBe(
    'Thanks! The v2 guide is at /docs/setup.',
  );
});
