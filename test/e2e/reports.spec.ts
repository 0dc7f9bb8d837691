import { expect, test, type APIRequestContext } from '@playwright/test';
import { expectAccessible } from './pages/accessibility';
import { auditOf, importAgents, screenshotScreen, signInAsModerator, testAgent, uniqueSuffix } from './pages/directory-fixtures';

/**
 * The Reports queue: abuse reports sent through the public API, decided in the console (dismiss,
 * edit, unlist, each with a reason), the agents flagged while reports are open.
 */

const suffix = uniqueSuffix();
const dismissed = testAgent('Reported Fine', suffix);
const edited = testAgent('Reported Typo', suffix);
const unlisted = testAgent('Reported Malware', suffix);

test.describe.configure({ timeout: 90_000 });

test.beforeAll(() => {
  importAgents([dismissed, edited, unlisted]);
});

test.beforeEach(async ({ page }) => {
  await signInAsModerator(page);
});

async function report(request: APIRequestContext, agentId: string, reason: string, details: string): Promise<string> {
  const response = await request.post(`/api/v1/agents/${agentId}/reports`, { data: { reason, details, contact_email: 'reporter@example.com' } });
  expect(response.status(), await response.text()).toBe(202);
  return (await response.json()).id;
}

test('dismiss, edit and unlist from the Reports queue; the agents screen flags open reports', async ({ page, request }) => {
  const dismissId = await report(request, dismissed.id, 'spam', `Looks like spam ${suffix}`);
  const editId = await report(request, edited.id, 'other', 'The tagline says it deletes your files');
  const unlistId = await report(request, unlisted.id, 'malware', 'The installer downloads a miner');

  // The agents screen flags an agent with an open report.
  await page.goto("/console/agents");
  await page.getByRole('textbox', { name: 'Search agents' }).fill(`Reported Malware ${suffix}`);
  await page.getByRole('textbox', { name: 'Search agents' }).press('Enter');
  const row = page.locator(`[data-testid="agent-row"][data-agent-id="${unlisted.id}"]`);
  await expect(row.getByTestId('agent-open-reports')).toHaveText('1 open report');

  await page.goto('/console/reports');
  const view = page.getByTestId('reports-view');
  await expect(view).toHaveAttribute('data-busy', 'false');
  const card = (id: string) => page.locator(`[data-testid="report"][data-id="${id}"]`);
  await expect(card(dismissId)).toContainText(`Looks like spam ${suffix}`);
  await expect(card(dismissId).getByTestId('report-reason')).toHaveText('Spam');
  await screenshotScreen(page, '60-reports-open');
  await expectAccessible(page, 'console-reports');

  // Dismiss with a template.
  await card(dismissId).getByTestId('report-dismiss').click();
  await expect(page.getByTestId('report-decision-dialog')).toBeVisible();
  await page.getByTestId('report-decision-template').click();
  await page.locator('.n-base-select-option', { hasText: 'Checked: nothing wrong' }).filter({ visible: true }).click();
  await page.getByTestId('report-decision-confirm').click();
  await expect(card(dismissId).getByTestId('report-decision')).toContainText('Dismissed by admin-token');

  // Edit: the dialog holds the agent's text; the change and the reason go through together.
  await card(editId).getByTestId('report-edit').click();
  const tagline = page.getByTestId('report-edit-tagline').locator('input');
  await expect(tagline).toHaveValue(edited.tagline);
  await tagline.fill('Keeps your files tidy, never deletes them');
  await expectAccessible(page, 'console-report-edit-dialog');
  await page.getByTestId('report-decision-reason').locator('textarea').fill('The tagline was misleading');
  await page.getByTestId('report-decision-confirm').click();
  await expect(card(editId).getByTestId('report-decision')).toContainText('Resolved, agent edited, by admin-token');
  expect((await (await request.get(`/api/v1/agents/${edited.id}`)).json()).tagline).toBe('Keeps your files tidy, never deletes them');

  // Unlist: the public API no longer shows the agent.
  await card(unlistId).getByTestId('report-unlist').click();
  await page.getByTestId('report-decision-reason').locator('textarea').fill('Ships a crypto miner');
  await page.getByTestId('report-decision-confirm').click();
  await expect(card(unlistId).getByTestId('report-decision')).toContainText('Resolved, agent unlisted, by admin-token');
  expect((await request.get(`/api/v1/agents/${unlisted.id}`)).status()).toBe(404);
  await screenshotScreen(page, '61-reports-decided');

  // Each decision is audited with its reason.
  const audit = await auditOf(request, unlistId);
  expect(audit[0]).toMatchObject({ action: 'report.unlist', actor: 'admin-token' });

  // Decided reports leave the open tab.
  await page.reload();
  await expect(view).toHaveAttribute('data-busy', 'false');
  await expect(card(unlistId)).toHaveCount(0);
  await page.getByTestId('reports-tab-resolved').click();
  await expect(card(unlistId)).toBeVisible();
});
