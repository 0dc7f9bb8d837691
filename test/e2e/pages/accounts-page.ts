import { expect, type Locator, type Page } from '@playwright/test';

/** The Accounts screen (admins): search, roles as checkboxes, disable and enable. */
export class AccountsPage {
  readonly view: Locator;
  readonly search: Locator;
  readonly rows: Locator;
  readonly total: Locator;

  constructor(private readonly page: Page) {
    this.view = page.getByTestId('accounts-view');
    this.search = page.getByTestId('accounts-search');
    this.rows = page.getByTestId('account-row');
    this.total = page.getByTestId('accounts-total');
  }

  async open(): Promise<void> {
    await this.page.getByTestId('nav-accounts').click();
    await this.expectLoaded();
  }

  async expectLoaded(): Promise<void> {
    await expect(this.page.getByTestId('page-title')).toHaveText('Accounts');
    await expect(this.page.getByTestId('accounts-ready')).toBeVisible();
    await expect(this.view).toHaveAttribute('data-busy', 'false');
  }

  /** Types into the search and waits for the answer that holds `expectedTotal` accounts. */
  async searchFor(text: string, expectedTotal: number): Promise<void> {
    await this.search.fill(text);
    await expect(this.total).toHaveText(expectedTotal === 1 ? '1 account matches' : `${expectedTotal} accounts match`);
    await expect(this.view).toHaveAttribute('data-busy', 'false');
  }

  row(email: string): Locator {
    return this.rows.filter({ has: this.page.getByTestId('account-email').getByText(email, { exact: true }) });
  }

  roleBox(email: string, role: 'moderator' | 'admin'): Locator {
    return this.row(email).getByTestId(`role-${role}`);
  }

  async toggleRole(email: string, role: 'moderator' | 'admin'): Promise<void> {
    await this.roleBox(email, role).click();
  }

  async disable(email: string): Promise<void> {
    await this.row(email).getByTestId('disable-account').click();
    await this.page.getByTestId('confirm-disable').click();
    await expect(this.row(email).getByTestId('account-status')).toHaveText('Disabled');
  }

  async enable(email: string): Promise<void> {
    await this.row(email).getByTestId('enable-account').click();
    await expect(this.row(email).getByTestId('account-status')).toHaveText('Active');
  }
}
