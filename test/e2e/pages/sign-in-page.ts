import { expect, type Locator, type Page } from '@playwright/test';

/** The sign-in screen, as a moderator uses it: e-mail and password first, the admin token on its own tab. */
export class SignInPage {
  readonly card: Locator;
  readonly accountTab: Locator;
  readonly tokenTab: Locator;
  readonly emailInput: Locator;
  readonly passwordInput: Locator;
  readonly accountSubmit: Locator;
  readonly tokenInput: Locator;
  readonly submit: Locator;
  readonly error: Locator;

  constructor(private readonly page: Page) {
    this.card = page.getByTestId('sign-in-card');
    this.accountTab = page.getByRole('tab', { name: 'E-mail and password' });
    this.tokenTab = page.getByRole('tab', { name: 'Admin token' });
    this.emailInput = page.getByTestId('email-input').locator('input');
    this.passwordInput = page.getByTestId('password-input').locator('input');
    this.accountSubmit = page.getByTestId('account-sign-in-button');
    this.tokenInput = page.getByTestId('token-input').locator('input');
    this.submit = page.getByTestId('sign-in-button');
    this.error = page.getByTestId('sign-in-error');
  }

  async expectShown(): Promise<void> {
    await expect(this.page).toHaveURL(/\/console\/sign-in/);
    await expect(this.card).toBeVisible();
  }

  /** The automation path: the admin token's tab. */
  async signIn(token: string): Promise<void> {
    await this.tokenTab.click();
    await this.tokenInput.fill(token);
    await this.submit.click();
  }

  /** The default tab: an account's e-mail and password. */
  async signInWithAccount(email: string, password: string): Promise<void> {
    await this.accountTab.click();
    await this.emailInput.fill(email);
    await this.passwordInput.fill(password);
    await this.accountSubmit.click();
  }
}
