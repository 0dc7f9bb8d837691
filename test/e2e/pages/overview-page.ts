import { expect, type Locator, type Page } from '@playwright/test';

/** The overview: directory counts, once loaded. */
export class OverviewPage {
  readonly ready: Locator;
  readonly title: Locator;
  readonly agentsCount: Locator;
  readonly keysCount: Locator;

  constructor(private readonly page: Page) {
    this.ready = page.getByTestId('overview-ready');
    this.title = page.getByTestId('page-title');
    this.agentsCount = page.getByTestId('count-agents').locator('.n-statistic-value__content');
    this.keysCount = page.getByTestId('count-keys').locator('.n-statistic-value__content');
  }

  async goto(): Promise<void> {
    await this.page.goto('/console/overview');
  }

  async expectLoaded(): Promise<void> {
    await expect(this.page).toHaveURL(/\/console\/overview$/);
    await expect(this.ready).toBeVisible();
    await expect(this.title).toHaveText('Overview');
  }

  async count(locator: Locator): Promise<number> {
    return Number((await locator.innerText()).replace(/[^\d]/g, ''));
  }
}
