import { expect, test, type APIRequestContext } from '@playwright/test';
import { signInAsModerator, uniqueSuffix } from './pages/directory-fixtures';

/** The main tasks with the keyboard alone: no click after the page is opened. */

async function submitAgent(request: APIRequestContext, name: string, slug: string): Promise<{ id: string }> {
  for (let attempt = 0; ; attempt++) {
    const response = await request.post('/api/v1/submit', {
      data: {
        name,
        tagline: `${name} keeps an eye on things`,
        source_url: `https://${slug}.example.com/agent`,
        description: `${name} watches dashboards and writes a short report every morning.`,
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
    return response.json();
  }
}

const statusOf = async (request: APIRequestContext, id: string): Promise<string> =>
  (await (await request.get(`/api/v1/submissions/${id}`)).json()).status;

test('approve and reject from the keyboard, each taken back once with z before it is sent', async ({ page, request }) => {
  test.setTimeout(60_000);
  const tag = uniqueSuffix();
  const first = await submitAgent(request, `Undo Alpha ${tag}`, `undo-alpha-${tag}`);
  const second = await submitAgent(request, `Undo Bravo ${tag}`, `undo-bravo-${tag}`);
  await signInAsModerator(page);
  await page.goto('/console/submissions');
  const view = page.getByTestId('submissions-view');
  await expect(view).toHaveAttribute('data-busy', 'false');

  // The skip link is the first Tab stop and lands in <main>.
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('skip-link')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('main#main-content')).toBeFocused();

  // "/" searches; Escape leaves the box, so the next keys are shortcuts again.
  await page.keyboard.press('/');
  await page.keyboard.type(tag);
  await expect(page.getByTestId('submission-row')).toHaveCount(2);
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('submissions-search').locator('input')).not.toBeFocused();
  // Newest first: j moves down to the older one, k back up.
  await page.keyboard.press('j');
  await expect(view).toHaveAttribute('data-selected', first.id);
  await page.keyboard.press('k');
  await expect(view).toHaveAttribute('data-selected', second.id);

  // a approves; z within the window takes it back: the row returns and nothing was sent.
  await page.keyboard.press('a');
  await expect(page.locator(`[data-testid="submission-row"][data-id="${second.id}"]`)).toHaveCount(0);
  await expect(page.getByTestId('toast-region')).toContainText(`Approving "Undo Bravo ${tag}"`);
  await page.keyboard.press('z');
  await expect(page.locator(`[data-testid="submission-row"][data-id="${second.id}"]`)).toHaveCount(1);
  await expect(view).toHaveAttribute('data-selected', second.id);
  await expect(page.getByTestId('toast-region')).toContainText('stays pending');
  await page.waitForTimeout(5500);
  expect(await statusOf(request, second.id)).toBe('pending');

  // a again, left alone: sent when the window ends.
  await page.keyboard.press('a');
  await expect(page.getByTestId('toast-region')).toContainText(`Approved "Undo Bravo ${tag}"`);
  expect(await statusOf(request, second.id)).toBe('approved');

  // r asks for a reason (Ctrl+Enter confirms); z takes the rejection back; r again sends it.
  await expect(view).toHaveAttribute('data-selected', first.id);
  await page.keyboard.press('r');
  await expect(page.getByTestId('reject-dialog')).toBeVisible();
  await page.keyboard.type('Not an agent');
  await page.keyboard.press('Control+Enter');
  await expect(page.getByTestId('reject-dialog')).toBeHidden();
  await page.keyboard.press('z');
  await expect(page.locator(`[data-testid="submission-row"][data-id="${first.id}"]`)).toHaveCount(1);
  await page.keyboard.press('r');
  await page.keyboard.type('Not an agent');
  await page.keyboard.press('Control+Enter');
  await expect(page.getByTestId('toast-region')).toContainText(`Rejected "Undo Alpha ${tag}"`);
  expect(await statusOf(request, first.id)).toBe('rejected');
  // At most three toasts at a time.
  expect(await page.locator('.n-message').count()).toBeLessThanOrEqual(3);
});
