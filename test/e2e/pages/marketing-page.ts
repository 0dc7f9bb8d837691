import { expect, type Locator, type Page } from '@playwright/test';

/** The marketing screen: posts, metrics and A/B tests, and the post drawer. */
export class MarketingPage {
  readonly postsTable: Locator;
  readonly postRows: Locator;
  readonly postsEmpty: Locator;
  readonly postsError: Locator;

  readonly drawer: Locator;
  readonly drawerTitle: Locator;
  readonly statusTag: Locator;
  readonly save: Locator;
  readonly publish: Locator;
  readonly archive: Locator;
  readonly stale: Locator;
  readonly staleReload: Locator;

  readonly metrics: Locator;
  readonly metricsError: Locator;
  readonly abTable: Locator;

  constructor(private readonly page: Page) {
    this.postsTable = page.getByTestId('posts-table');
    this.postRows = page.getByTestId('post-row');
    this.postsEmpty = page.getByTestId('posts-empty');
    this.postsError = page.getByTestId('posts-error');

    this.drawer = page.getByTestId('post-drawer');
    this.drawerTitle = page.getByTestId('post-drawer-title');
    this.statusTag = page.getByTestId('post-status-tag');
    this.save = page.getByTestId('post-save');
    this.publish = page.getByTestId('post-publish');
    this.archive = page.getByTestId('post-archive');
    this.stale = page.getByTestId('post-stale');
    this.staleReload = page.getByTestId('post-stale-reload');

    this.metrics = page.getByTestId('metrics-panel');
    this.metricsError = page.getByTestId('metrics-error');
    this.abTable = page.getByTestId('ab-table');
  }

  async goto(query = ''): Promise<void> {
    await this.page.goto(`/console/marketing${query}`);
  }

  async expectPostsLoaded(): Promise<void> {
    await expect(this.postsTable).toHaveAttribute('data-loaded', 'true');
  }

  async expectAbTestsLoaded(): Promise<void> {
    await expect(this.abTable).toHaveAttribute('data-loaded', 'true');
  }

  tab(name: string): Locator {
    return this.page.locator('.n-tabs-tab', { hasText: name });
  }

  /** Picks `label` in one of the posts filters (status, tone, channel). */
  async filter(which: 'status' | 'tone' | 'channel', label: string): Promise<void> {
    await this.page.getByTestId(`posts-${which}`).click();
    await this.option(label).click();
    await this.expectPostsLoaded();
  }

  option(label: string): Locator {
    // Menus of selects opened before linger hidden in the page: only the open one counts.
    return this.page.locator('.n-base-select-option', { hasText: new RegExp(`^${label}$`) }).filter({ visible: true });
  }

  postRow(postId: string): Locator {
    return this.page.locator(`[data-testid="post-row"][data-post-id="${postId}"]`);
  }

  async expectDrawerFor(postId: string): Promise<void> {
    await expect(this.page).toHaveURL(new RegExp(`[?&]post=${postId}`));
    await expect(this.drawer).toBeVisible();
    await expect(this.save).toBeVisible();
  }

  field(label: 'Title' | 'Body'): Locator {
    return this.drawer.getByRole('textbox', { name: label, exact: true });
  }

  async choose(field: 'tone' | 'channel', label: string): Promise<void> {
    await this.page.getByTestId(`post-field-${field}`).click();
    await this.option(label).click();
  }

  abRow(testId: string): Locator {
    return this.page.locator(`[data-testid="ab-row"][data-test-id="${testId}"]`);
  }

  popconfirm(): Locator {
    return this.page.locator('.n-popconfirm');
  }

  confirmButton(name: string): Locator {
    return this.popconfirm().getByRole('button', { name, exact: true });
  }

  message(text: string | RegExp): Locator {
    return this.page.locator('.n-message', { hasText: text });
  }
}
