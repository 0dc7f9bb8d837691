import { expect, test } from '@playwright/test';
import { collectPageErrors, screenshotPath } from './pages/directory-fixtures';

/**
 * The API reference (Swagger UI) at both URLs the server answers, the one it prints
 * (`/api/v1/docs`, no trailing slash) and `/api/v1/docs/`: every asset loads, the operations are
 * listed, and "Try it out" sends a real request to this server and shows its answer.
 */

// Swagger UI's bundle is 1.5 MB of JavaScript: its first render on a loaded, shared machine takes a while.
test.describe.configure({ timeout: 90_000 });

for (const url of ['/api/v1/docs', '/api/v1/docs/']) {
  test(`the API reference at ${url} lists the operations and "Try it out" answers`, async ({ page }) => {
    const pageErrors = collectPageErrors(page);
    const failed: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });

    await page.goto(url);
    await expect(page.locator('.swagger-ui .info .title')).toContainText('Agent Directory', { timeout: 45_000 });
    const operations = page.locator('.opblock');
    await expect(operations.first()).toBeVisible();
    expect(await operations.count()).toBeGreaterThan(20);
    await expect(page.locator('.opblock-summary-path[data-path="/api/v1/agents/search"]').first()).toBeVisible();

    const health = page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/api/v1/health"]') });
    await health.locator('.opblock-summary').click();
    await health.getByRole('button', { name: 'Try it out' }).click();
    await health.getByRole('button', { name: 'Execute' }).click();

    const live = health.locator('.live-responses-table .response');
    await expect(live.locator('.response-col_status')).toHaveText('200');
    await expect(live.locator('.response-col_description')).toContainText('"status": "ok"');
    await page.screenshot({ path: screenshotPath(`90-api-docs${url.endsWith('/') ? '-slash' : ''}`) });

    expect(failed).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
}
