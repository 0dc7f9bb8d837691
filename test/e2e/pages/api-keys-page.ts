import { expect, type Locator, type Page } from '@playwright/test';
import { SignInPage } from './sign-in-page';

/** The API keys screen and its issue dialog, as a moderator uses them. */
export class ApiKeysPage {
  readonly ready: Locator;
  readonly issueButton: Locator;
  readonly dialog: Locator;
  readonly nameInput: Locator;
  readonly submit: Locator;
  readonly issuedKey: Locator;
  readonly issuedKeyValue: Locator;
  readonly issuedWarning: Locator;
  readonly copyButton: Locator;
  readonly done: Locator;
  readonly search: Locator;
  readonly counts: Locator;

  constructor(private readonly page: Page) {
    this.ready = page.getByTestId('keys-ready');
    this.issueButton = page.getByTestId('issue-key');
    this.dialog = page.getByTestId('issue-key-dialog');
    this.nameInput = page.getByTestId('issue-key-name');
    this.submit = page.getByTestId('issue-key-submit');
    this.issuedKey = page.getByTestId('issued-key');
    this.issuedKeyValue = page.getByTestId('issued-key-value');
    this.issuedWarning = page.getByTestId('issued-key-warning');
    this.copyButton = page.getByTestId('copy-key');
    this.done = page.getByTestId('issued-key-done');
    this.search = page.getByTestId('keys-search');
    this.counts = page.getByTestId('keys-counts');
  }

  /** Opens the screen (signing in on the way when needed) and waits for the list. */
  async open(adminToken: string, query = ''): Promise<void> {
    await this.page.goto(`/console/api-keys${query}`);
    // Signed out, the console shows the sign-in screen first and comes back here afterwards.
    const signIn = new SignInPage(this.page);
    await expect(signIn.card.or(this.page.getByTestId('page-title'))).toBeVisible();
    if (await signIn.card.isVisible()) await signIn.signIn(adminToken);
    await expect(this.page).toHaveURL(/\/console\/api-keys/);
    await expect(this.page.getByTestId('page-title')).toHaveText('API keys');
  }

  async expectLoaded(): Promise<void> {
    await expect(this.ready.or(this.page.getByTestId('keys-empty'))).toBeVisible();
  }

  row(name: string): Locator {
    return this.page.getByTestId('key-row').filter({ has: this.page.getByTestId('key-name').getByText(name, { exact: true }) });
  }

  rowById(id: string): Locator {
    return this.page.locator(`[data-testid="key-row"][data-key-id="${id}"]`);
  }

  status(row: Locator): Locator {
    return row.getByTestId('key-status');
  }

  /** Fills the dialog and issues the key; returns the key shown once. */
  async issue(name: string): Promise<string> {
    await this.issueButton.click();
    await expect(this.dialog).toBeVisible();
    await this.nameInput.fill(name);
    await this.submit.click();
    await expect(this.issuedKey).toBeVisible();
    return this.issuedKeyValue.inputValue();
  }

  async revoke(row: Locator): Promise<void> {
    await row.getByTestId('revoke-key').click();
    await expect(this.page.getByTestId('revoke-confirm')).toBeVisible();
    await this.page.getByTestId('confirm-revoke').click();
  }
}
