import { expect, type Download, type Locator, type Page } from '@playwright/test';
import { SignInPage } from './sign-in-page';

/** The newsletter screen: subscribers, search, paging and the CSV export. */
export class NewsletterPage {
  readonly ready: Locator;
  readonly search: Locator;
  readonly rows: Locator;
  readonly emails: Locator;
  readonly subscribedCount: Locator;
  readonly matchingCount: Locator;
  readonly exportButton: Locator;
  readonly noMatch: Locator;

  constructor(private readonly page: Page) {
    this.ready = page.getByTestId('newsletter-ready');
    this.search = page.getByTestId('newsletter-search');
    this.rows = page.getByTestId('subscriber-row');
    this.emails = page.getByTestId('subscriber-email');
    this.subscribedCount = page.getByTestId('subscribed-count').locator('.n-statistic-value__content');
    this.matchingCount = page.getByTestId('matching-count').locator('.n-statistic-value__content');
    this.exportButton = page.getByTestId('export-csv');
    this.noMatch = page.getByTestId('newsletter-no-match');
  }

  async open(adminToken: string, query = ''): Promise<void> {
    await this.page.goto(`/console/newsletter${query}`);
    // Signed out, the console shows the sign-in screen first and comes back here afterwards.
    const signIn = new SignInPage(this.page);
    await expect(signIn.card.or(this.page.getByTestId('page-title'))).toBeVisible();
    if (await signIn.card.isVisible()) await signIn.signIn(adminToken);
    await expect(this.page).toHaveURL(/\/console\/newsletter/);
    await expect(this.page.getByTestId('page-title')).toHaveText('Newsletter');
  }

  /** Waits until the table shows the answer for `q` (the search applies after a short pause) on `page`, with the `status` filter if given. */
  async expectShowing(q: string, page = 1, status?: string): Promise<void> {
    await expect(this.ready).toHaveAttribute('data-loaded-query', q);
    if (status !== undefined) await expect(this.ready).toHaveAttribute('data-loaded-status', status);
    await expect(this.ready).toHaveAttribute('data-loaded-page', String(page));
    await expect(this.ready).toHaveAttribute('data-busy', 'false');
  }

  async searchFor(q: string): Promise<void> {
    await this.search.fill(q);
    await this.expectShowing(q);
  }

  async filterStatus(label: string): Promise<void> {
    await this.page.getByTestId('newsletter-status-filter').click();
    await this.page.locator('.n-base-select-option', { hasText: new RegExp(`^${label}$`) }).click();
  }

  async goToPage(n: number): Promise<void> {
    await this.page.locator('.n-pagination-item', { hasText: new RegExp(`^${n}$`) }).click();
  }

  async count(locator: Locator): Promise<number> {
    return Number((await locator.innerText()).replace(/[^\d]/g, ''));
  }

  async exportCsv(): Promise<Download> {
    const download = this.page.waitForEvent('download');
    await this.exportButton.click();
    return download;
  }
}
