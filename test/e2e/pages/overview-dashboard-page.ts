import { expect, type Locator, type Page } from '@playwright/test';
import { OverviewPage } from './overview-page';

/** The overview's queues, directory figures and charts (the sign-in spec's OverviewPage covers loading it). */
export class OverviewDashboard extends OverviewPage {
  readonly submissionsQueue: Locator;
  readonly claimsQueue: Locator;
  readonly webhooksQueue: Locator;
  readonly verifiedCount: Locator;
  readonly reviewsCount: Locator;
  readonly error: Locator;
  readonly refresh: Locator;

  constructor(page: Page) {
    super(page);
    this.submissionsQueue = page.getByTestId('queue-submissions');
    this.claimsQueue = page.getByTestId('queue-claims');
    this.webhooksQueue = page.getByTestId('queue-webhooks');
    this.verifiedCount = page.getByTestId('count-verified').locator('.n-statistic-value__content');
    this.reviewsCount = page.getByTestId('count-reviews').locator('.n-statistic-value__content');
    this.error = page.getByTestId('overview-error');
    this.refresh = page.getByTestId('overview-refresh');
  }

  async queueCount(queue: Locator): Promise<number> {
    return Number(await queue.getAttribute('data-count'));
  }

  async expectQueue(queue: Locator, count: number): Promise<void> {
    await expect(queue).toHaveAttribute('data-count', String(count));
    await expect(queue.getByTestId('queue-count')).toHaveText(count.toLocaleString('en-US'));
  }
}
