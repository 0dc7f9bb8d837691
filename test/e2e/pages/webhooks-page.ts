import { expect, type Locator, type Page } from '@playwright/test';

/** The webhooks screens (the endpoint list, one endpoint's screen) and their dialogs, as a moderator uses them. */
export class WebhooksPage {
  readonly title: Locator;
  readonly ready: Locator;
  readonly empty: Locator;
  readonly error: Locator;
  readonly addButton: Locator;
  readonly search: Locator;
  readonly counts: Locator;
  readonly stale: Locator;

  readonly form: Locator;
  readonly formUrl: Locator;
  readonly formEvents: Locator;
  readonly formDescription: Locator;
  readonly formSubmit: Locator;
  readonly formStale: Locator;
  readonly formStaleReload: Locator;

  readonly secretDialog: Locator;
  readonly secretConfirm: Locator;
  readonly secretValue: Locator;
  readonly secretCopy: Locator;
  readonly secretDone: Locator;

  readonly disableDialog: Locator;
  readonly removeDialog: Locator;
  readonly redeliverFailedDialog: Locator;

  readonly detail: Locator;
  readonly testResult: Locator;
  readonly preview: Locator;
  readonly log: Locator;

  constructor(private readonly page: Page) {
    this.title = page.getByTestId('page-title');
    this.ready = page.getByTestId('endpoints-ready');
    this.empty = page.getByTestId('endpoints-empty');
    this.error = page.getByTestId('webhooks-error');
    this.addButton = page.getByTestId('add-endpoint');
    this.search = page.getByTestId('endpoints-search');
    this.counts = page.getByTestId('endpoints-counts');
    this.stale = page.getByTestId('webhooks-stale');

    this.form = page.getByTestId('endpoint-dialog');
    this.formUrl = page.getByTestId('endpoint-url');
    this.formEvents = page.getByTestId('endpoint-events');
    this.formDescription = page.getByTestId('endpoint-description');
    this.formSubmit = page.getByTestId('endpoint-submit');
    this.formStale = page.getByTestId('endpoint-stale');
    this.formStaleReload = page.getByTestId('endpoint-stale-reload');

    this.secretDialog = page.getByTestId('secret-dialog');
    this.secretConfirm = page.getByTestId('secret-confirm-button');
    this.secretValue = page.getByTestId('secret-value');
    this.secretCopy = page.getByTestId('secret-copy');
    this.secretDone = page.getByTestId('secret-done');

    this.disableDialog = page.getByTestId('disable-dialog');
    this.removeDialog = page.getByTestId('remove-dialog');
    this.redeliverFailedDialog = page.getByTestId('redeliver-dialog');

    this.detail = page.getByTestId('endpoint-detail');
    this.testResult = page.getByTestId('test-result');
    this.preview = page.getByTestId('preview-ready');
    this.log = page.getByTestId('delivery-log');
  }

  async goto(query = ''): Promise<void> {
    await this.page.goto(`/console/webhooks${query}`);
    await expect(this.title).toHaveText('Webhooks');
  }

  /** The list has its answer (the table, or the empty state). */
  async expectListLoaded(): Promise<void> {
    await expect(this.ready.or(this.empty)).toBeVisible();
  }

  row(endpointId: string): Locator {
    return this.page.locator(`[data-testid="endpoint-row"][data-endpoint-id="${endpointId}"]`);
  }

  rowByUrl(url: string): Locator {
    return this.page
      .getByTestId('endpoint-row')
      .filter({ has: this.page.getByTestId('endpoint-url-cell').getByText(url, { exact: true }) });
  }

  /** Picks event kinds in the form's multi-select. */
  async chooseEvents(kinds: string[]): Promise<void> {
    // A multiple select stays open while options are picked.
    await this.formEvents.click();
    for (const kind of kinds) {
      const option = this.page.locator('.n-base-select-option', { hasText: kind }).filter({ visible: true }).first();
      await option.click();
      await expect(option).toHaveClass(/n-base-select-option--selected/);
    }
    await this.page.keyboard.press('Escape');
  }

  /** A row's "⋯" menu entry: reveal, rotate or remove. */
  async rowMenu(row: Locator, entry: 'reveal' | 'rotate' | 'remove'): Promise<void> {
    await row.getByTestId('endpoint-more').click();
    await this.page.getByTestId(`endpoint-menu-${entry}`).click();
  }

  async openEndpoint(endpointId: string, tab?: 'log' | 'test' | 'preview'): Promise<void> {
    await this.row(endpointId).getByTestId('endpoint-open').click();
    await this.expectDetailOf(endpointId);
    if (tab) await this.tab(tab);
  }

  async expectDetailOf(endpointId: string): Promise<void> {
    await expect(this.page).toHaveURL(new RegExp(`[?&]endpoint=${endpointId}`));
    await expect(this.detail).toHaveAttribute('data-endpoint-id', endpointId);
  }

  async tab(tab: 'log' | 'test' | 'preview'): Promise<void> {
    const names = { log: 'Delivery log', test: 'Test send', preview: 'Payload preview' };
    await this.page.getByTestId('endpoint-tabs').locator('.n-tabs-tab', { hasText: names[tab] }).click();
  }

  /** Picks an option of a naive-ui select by its exact text. */
  async select(select: Locator, label: string): Promise<void> {
    await select.click();
    await this.page
      .locator('.n-base-select-option', { hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) })
      .filter({ visible: true })
      .first()
      .click();
  }

  deliveryRows(eventId: string): Locator {
    return this.page.locator(`[data-testid="delivery-row"][data-event-id="${eventId}"]`);
  }

  delivery(deliveryId: string): Locator {
    return this.page.locator(`[data-testid="delivery-row"][data-delivery-id="${deliveryId}"]`);
  }

  /** The expanded attempts of a delivery. */
  attempts(deliveryId: string): Locator {
    return this.page.locator(`[data-testid="delivery-attempts"][data-delivery-id="${deliveryId}"]`);
  }

  message(text: string | RegExp): Locator {
    return this.page.locator('.n-message', { hasText: text });
  }
}
