import { expect, type Locator, type Page } from '@playwright/test';

/** The sign-in screen, as a moderator uses it. */
export class SignInPage {
  readonly card: Locator;
  readonly tokenInput: Locator;
  readonly submit: Locator;
  readonly error: Locator;

  constructor(private readonly page: Page) {
    this.card = page.getByTestId('sign-in-card');
    this.tokenInput = page.getByLabel('Admin token');
    this.submit = page.getByTestId('sign-in-button');
    this.error = page.getByTestId('sign-in-error');
  }

  async expectShown(): Promise<void> {
    await expect(this.page).toHaveURL(/\/console\/sign-in/);
    await expect(this.card).toBeVisible();
  }

  async signIn(token: string): Promise<void> {
    await this.tokenInput.fill(token);
    await this.submit.click();
  }
}
