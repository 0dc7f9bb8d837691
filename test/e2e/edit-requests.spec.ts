import { expect, test, type APIRequestContext } from '@playwright/test';
import { expectAccessible } from './pages/accessibility';
import { createConsoleAccount } from './pages/console-accounts';
import { auditOf, importAgents, publicApi, screenshotScreen, signInAsModerator, testAgent, trpc } from './pages/directory-fixtures';

/**
 * An owner renames their agent through the API (PATCH /me/agents/{id} → 202), and a moderator
 * sees the request with its diff in the console and approves or rejects it.
 */

/** An agent owned by a new account (its claim verified by a moderator), and a request context signed in as that account. */
async function ownedAgent(
  playwright: { request: { newContext(options: { baseURL: string }): Promise<APIRequestContext> } },
  baseURL: string,
  label: string,
) {
  const agent = testAgent(label);
  importAgents([agent]);
  const owner = createConsoleAccount(`Owner ${label}`);
  const api: APIRequestContext = await playwright.request.newContext({ baseURL });
  expect((await api.post('/api/v1/sessions', { data: { email: owner.email, password: owner.password } })).status()).toBe(201);
  const claim = await api.post('/api/v1/claims', { data: { agent_id: agent.id, claimant_name: owner.name, claimant_email: owner.email } });
  expect(claim.status()).toBe(201);
  await trpc(api, 'claims.verifyManually', { id: (await claim.json()).id, note: 'e2e owner' }, 'mutation');
  return { agent, owner, api };
}

test('a moderator approves an owner’s rename and rejects a source move, with reasons and the diff shown', async ({
  page,
  playwright,
  baseURL,
}) => {
  const renamed = await ownedAgent(playwright, baseURL!, 'Rename');
  const newName = `${renamed.agent.name} Pro`;
  const rename = await renamed.api.patch(`/api/v1/me/agents/${renamed.agent.id}`, { data: { name: newName } });
  expect(rename.status()).toBe(202);
  const renameId = (await rename.json()).id as string;

  const moved = await ownedAgent(playwright, baseURL!, 'Move');
  const move = await moved.api.patch(`/api/v1/me/agents/${moved.agent.id}`, { data: { source_url: 'https://elsewhere.example/agent' } });
  expect(move.status()).toBe(202);
  const moveId = (await move.json()).id as string;

  await signInAsModerator(page);
  await page.goto('/console/edit-requests');
  const renameCard = page.locator(`[data-testid="edit-request"][data-id="${renameId}"]`);
  await expect(renameCard).toBeVisible();
  await expect(page.getByTestId('edit-requests-view')).toHaveAttribute('data-busy', 'false');
  await expect(renameCard.getByTestId('edit-request-diff')).toContainText(renamed.agent.name);
  await expect(renameCard.getByTestId('edit-request-diff')).toContainText(newName);
  await expect(renameCard.getByTestId('edit-request-owner')).toHaveText(`${renamed.owner.name} <${renamed.owner.email}>`);
  await screenshotScreen(page, 'console-edit-requests');
  await expectAccessible(page, 'console-edit-requests');

  await renameCard.getByTestId('edit-request-approve').click();
  await expect(renameCard.getByTestId('edit-request-status')).toHaveText('approved');
  expect((await publicApi<{ name: string }>(page.request, `/agents/${renamed.agent.id}`)).body.name).toBe(newName);
  expect((await auditOf(page.request, renamed.agent.id))[0]).toMatchObject({ action: 'agent.update', actor: 'admin-token' });

  const moveCard = page.locator(`[data-testid="edit-request"][data-id="${moveId}"]`);
  await moveCard.getByTestId('edit-request-reject').click();
  await page.getByTestId('reject-edit-reason').locator('textarea').fill('The new source is another project.');
  await page.getByTestId('reject-edit-confirm').click();
  await expect(moveCard.getByTestId('edit-request-status')).toHaveText('rejected');
  await expect(moveCard).toContainText('The new source is another project.');
  expect((await publicApi<{ source_url: string }>(page.request, `/agents/${moved.agent.id}`)).body.source_url).toBe(moved.agent.source_url);
  await screenshotScreen(page, 'console-edit-requests-decided');

  await renamed.api.dispose();
  await moved.api.dispose();
});
