import { expect, type Locator, type Page } from '@playwright/test';
import { SignInPage } from './sign-in-page';

/** The audit log: filters, the table, and the detail drawer with its diff. */
export class AuditLogPage {
  readonly ready: Locator;
  readonly rows: Locator;
  readonly noMatch: Locator;
  readonly drawer: Locator;
  readonly diffRows: Locator;
  readonly entityIdFilter: Locator;
  readonly reset: Locator;

  constructor(private readonly page: Page) {
    this.ready = page.getByTestId('audit-ready');
    this.rows = page.getByTestId('audit-row');
    this.noMatch = page.getByTestId('audit-no-match');
    this.drawer = page.getByTestId('audit-drawer');
    this.diffRows = this.drawer.getByTestId('diff-row');
    this.entityIdFilter = page.getByTestId('audit-filter-entity-id');
    this.reset = page.getByTestId('audit-filter-reset');
  }

  async open(adminToken: string, query = ''): Promise<void> {
    await this.page.goto(`/console/audit-log${query}`);
    await this.signInIfAsked(adminToken);
    await this.expectSettled();
  }

  /** Signed out, the console shows the sign-in screen first and comes back here afterwards. */
  async signInIfAsked(adminToken: string): Promise<void> {
    const signIn = new SignInPage(this.page);
    await expect(signIn.card.or(this.page.getByTestId('page-title'))).toBeVisible();
    if (await signIn.card.isVisible()) await signIn.signIn(adminToken);
    await expect(this.page).toHaveURL(/\/console\/audit-log/);
  }

  /** The table shows the answer to the current filters (no request in flight). */
  async expectSettled(): Promise<void> {
    await expect(this.ready).toBeVisible();
    await expect(this.ready).toHaveAttribute('data-busy', 'false');
  }

  /** Waits for the table to show entries loaded with `filter` (a fragment of the filters' JSON, e.g. `"actor":"cli"`). */
  async expectFiltered(fragment: string): Promise<void> {
    await expect(this.ready).toHaveAttribute('data-loaded-key', new RegExp(escapeRegExp(fragment)));
    await expect(this.ready).toHaveAttribute('data-busy', 'false');
  }

  row(entryId: string): Locator {
    return this.page.locator(`[data-testid="audit-row"][data-entry-id="${entryId}"]`);
  }

  /** Picks `value` in one of the select filters ("actor", "action", "entity-type"). */
  async choose(filter: 'actor' | 'action' | 'entity-type', label: string): Promise<void> {
    await this.page.getByTestId(`audit-filter-${filter}`).click();
    // The selects are filterable: typing narrows a long list (a full suite records dozens of actions, and
    // the menu renders only the options in view).
    await this.page.keyboard.type(label);
    await this.page.locator('.n-base-select-option', { hasText: new RegExp(`^${escapeRegExp(label)}$`) }).filter({ visible: true }).click();
  }

  async chooseRangeShortcut(label: string): Promise<void> {
    await this.page.getByTestId('audit-filter-range').click();
    // A shortcut applies at once and closes the panel.
    await this.page.locator('.n-date-panel').getByText(label, { exact: true }).click();
    await expect(this.page.locator('.n-date-panel')).toBeHidden();
  }

  column(testId: 'audit-when' | 'audit-actor' | 'audit-action' | 'audit-changes' | 'audit-entity-name'): Locator {
    return this.rows.getByTestId(testId);
  }

  diffRow(path: string): Locator {
    return this.drawer.locator(`[data-testid="diff-row"][data-path="${path}"]`);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
