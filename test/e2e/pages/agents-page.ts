import { expect, type Locator, type Page } from '@playwright/test';

/** The agents screen and its drawer, as a moderator uses them. */
export class AgentsPage {
  readonly table: Locator;
  readonly rows: Locator;
  readonly search: Locator;
  readonly typeFilter: Locator;
  readonly includeUnlisted: Locator;
  readonly mode: Locator;
  readonly empty: Locator;
  readonly error: Locator;

  readonly drawer: Locator;
  readonly drawerTitle: Locator;
  readonly verifiedTag: Locator;
  readonly listedTag: Locator;
  readonly rating: Locator;
  readonly save: Locator;
  readonly verify: Locator;
  readonly unverify: Locator;
  readonly unlist: Locator;
  readonly relist: Locator;
  readonly stale: Locator;
  readonly staleReload: Locator;
  readonly reviews: Locator;
  readonly reviewItems: Locator;
  readonly history: Locator;

  constructor(private readonly page: Page) {
    this.table = page.getByTestId('agents-table');
    this.rows = page.getByTestId('agent-row');
    this.search = page.getByRole('textbox', { name: 'Search agents' });
    this.typeFilter = page.getByTestId('agents-type');
    this.includeUnlisted = page.getByTestId('agents-include-unlisted');
    this.mode = page.getByTestId('agents-mode');
    this.empty = page.getByTestId('agents-empty');
    this.error = page.getByTestId('agents-error');

    this.drawer = page.getByTestId('agent-drawer');
    this.drawerTitle = page.getByTestId('agent-drawer-title');
    this.verifiedTag = page.getByTestId('agent-verified-tag');
    this.listedTag = page.getByTestId('agent-listed-tag');
    this.rating = page.getByTestId('agent-rating');
    this.save = page.getByTestId('agent-save');
    this.verify = page.getByTestId('agent-verify');
    this.unverify = page.getByTestId('agent-unverify');
    this.unlist = page.getByTestId('agent-unlist');
    this.relist = page.getByTestId('agent-relist');
    this.stale = page.getByTestId('agent-stale');
    this.staleReload = page.getByTestId('agent-stale-reload');
    this.reviews = page.getByTestId('agent-reviews');
    this.reviewItems = page.getByTestId('agent-review');
    this.history = page.getByTestId('agent-history');
  }

  async goto(query = ''): Promise<void> {
    await this.page.goto(`/console/agents${query}`);
  }

  /** The table has its answer (not loading). */
  async expectLoaded(): Promise<void> {
    await expect(this.table).toHaveAttribute('data-loaded', 'true');
  }

  row(agentId: string): Locator {
    return this.page.locator(`[data-testid="agent-row"][data-agent-id="${agentId}"]`);
  }

  async searchFor(text: string): Promise<void> {
    await this.search.fill(text);
    await this.search.press('Enter');
    await this.expectLoaded();
  }

  async openAgent(agentId: string): Promise<void> {
    await this.row(agentId).click();
    await this.expectDrawerFor(agentId);
  }

  async expectDrawerFor(agentId: string): Promise<void> {
    await expect(this.page).toHaveURL(new RegExp(`[?&]agent=${agentId}`));
    await expect(this.drawer).toBeVisible();
    await expect(this.save).toBeVisible();
  }

  field(label: string): Locator {
    return this.drawer.getByRole('textbox', { name: label, exact: true });
  }

  /** Adds a tag to a tag input (capabilities or categories): type it, then Enter. */
  async addTag(field: 'capabilities' | 'categories', value: string): Promise<void> {
    await this.page.getByTestId(`agent-field-${field}`).click();
    await this.page.keyboard.type(value);
    await expect(this.page.locator('.n-base-select-option', { hasText: value }).filter({ visible: true }).first()).toBeVisible();
    await this.page.keyboard.press('Enter');
    await this.page.keyboard.press('Escape');
  }

  /** Picks the agent's type in the form's select. */
  async selectType(label: string): Promise<void> {
    await this.page.getByTestId('agent-field-type').click();
    await this.page
      .locator('.n-base-select-option', { hasText: new RegExp(`^${label}$`) })
      .filter({ visible: true })
      .click();
  }

  tag(field: 'capabilities' | 'categories', value: string): Locator {
    return this.page.getByTestId(`agent-field-${field}`).locator('.n-tag', { hasText: value });
  }

  /** The visible popconfirm's confirming button. */
  confirmButton(name: string): Locator {
    return this.page.locator('.n-popconfirm').getByRole('button', { name, exact: true });
  }

  popconfirm(): Locator {
    return this.page.locator('.n-popconfirm');
  }

  tab(name: RegExp | string): Locator {
    return this.drawer.locator('.n-tabs-tab', { hasText: name });
  }

  review(reviewId: string): Locator {
    return this.page.locator(`[data-testid="agent-review"][data-review-id="${reviewId}"]`);
  }

  message(text: string | RegExp): Locator {
    return this.page.locator('.n-message', { hasText: text });
  }

  async closeDrawer(): Promise<void> {
    await this.page.keyboard.press('Escape');
    await expect(this.drawer).toBeHidden();
  }
}
