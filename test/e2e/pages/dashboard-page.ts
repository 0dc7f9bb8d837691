import fs from 'node:fs';
import path from 'node:path';
import { expect, type Locator, type Page } from '@playwright/test';

/** The developer dashboard (/dashboard), as a developer uses it: the signed-out pages and the signed-in screens. */
export class DashboardPage {
  readonly accountName: Locator;
  readonly pageTitle: Locator;

  constructor(private readonly page: Page) {
    this.accountName = page.getByTestId('account-name');
    this.pageTitle = page.getByTestId('page-title');
  }

  async signUp(account: { name: string; email: string; password: string }): Promise<void> {
    await this.page.goto('/dashboard/sign-up');
    await this.page.getByLabel('Name', { exact: true }).fill(account.name);
    await this.page.getByLabel('E-mail', { exact: true }).fill(account.email);
    await this.page.getByLabel('Password', { exact: true }).fill(account.password);
    await this.page.getByTestId('sign-up-button').click();
    await expect(this.page.getByTestId('sign-up-sent-to')).toHaveText(account.email);
  }

  /** Follows the link of the verification mail and goes on to sign in. */
  async verifyWith(link: string): Promise<void> {
    await this.page.goto(link);
    await expect(this.page.getByTestId('verify-done')).toBeVisible();
    await this.page.getByTestId('verify-sign-in').click();
    await expect(this.page).toHaveURL(/\/dashboard\/sign-in/);
  }

  async signIn(email: string, password: string): Promise<void> {
    if (!/\/dashboard\/sign-in/.test(this.page.url())) await this.page.goto('/dashboard/sign-in');
    await this.page.getByLabel('E-mail', { exact: true }).fill(email);
    await this.page.getByLabel('Password', { exact: true }).fill(password);
    await this.page.getByTestId('sign-in-button').click();
  }

  async open(screen: 'keys' | 'webhooks' | 'claims' | 'agents' | 'settings'): Promise<void> {
    await this.page.getByTestId(`nav-${screen}`).click();
    await expect(this.page).toHaveURL(new RegExp(`/dashboard/${screen}`));
  }

  /** Creates a key in the dialog and returns it, as shown once. */
  async createKey(name: string): Promise<string> {
    await this.page.getByTestId('issue-key').click();
    await this.page.getByTestId('issue-key-name').fill(name);
    await this.page.getByTestId('issue-key-submit').click();
    const value = this.page.getByTestId('issued-key-value');
    await expect(value).toHaveValue(/^adk_/);
    const key = await value.inputValue();
    await this.page.getByTestId('issued-key-done').click();
    await expect(this.page.getByTestId('key-row').filter({ hasText: name })).toBeVisible();
    return key;
  }

  /** Adds an endpoint and returns its signing secret, as shown once; the dashboard then opens its test send. */
  async addEndpoint(url: string, scope: 'all' | 'owned' = 'all'): Promise<string> {
    await this.page.getByTestId('add-endpoint').click();
    await this.page.getByTestId('endpoint-url').fill(url);
    await this.page.getByTestId(`endpoint-scope-${scope}`).click();
    await this.page.getByTestId('endpoint-create-submit').click();
    const secret = this.page.getByTestId('secret-value');
    await expect(secret).toHaveValue(/^whsec_/);
    const value = await secret.inputValue();
    await this.page.getByTestId('secret-done').click();
    await expect(this.page.getByTestId('endpoint-detail-url')).toHaveText(url);
    return value;
  }

  async testSend(): Promise<Locator> {
    await this.page.getByTestId('test-send').click();
    const result = this.page.getByTestId('test-result');
    await expect(result).toBeVisible();
    return result;
  }

  async openTab(name: 'Delivery log' | 'Test send' | 'Payload preview'): Promise<void> {
    await this.page.getByTestId('endpoint-tabs').getByRole('tab', { name }).click();
  }

  async signOut(): Promise<void> {
    await this.page.getByTestId('sign-out').click();
    await expect(this.page).toHaveURL(/\/dashboard\/sign-in/);
  }
}

/**
 * The newest link to `pathPrefix` in a mail to `to`, from the .eml files the server writes into <data-dir>/mail/
 * when it has no SMTP server (as in these tests). Waits for the mail worker.
 */
export async function linkFromMail(dataDir: string, to: string, pathPrefix: string, timeoutMs = 15_000): Promise<string> {
  const folder = path.join(dataDir, 'mail');
  const deadline = Date.now() + timeoutMs;
  const pattern = new RegExp(`https?://[^\\s"<>]+${pathPrefix.replace(/[/.?]/g, '\\$&')}\\?token=[A-Za-z0-9_\\-.~%]+`);
  for (;;) {
    const files = fs.existsSync(folder) ? fs.readdirSync(folder).filter((file) => file.endsWith('.eml')) : [];
    for (const file of files.sort().reverse()) {
      // Quoted-printable soft breaks and escaped "=" would split the link.
      const text = fs.readFileSync(path.join(folder, file), 'utf8').replace(/=\r?\n/g, '').replace(/=3D/gi, '=');
      if (!new RegExp(`^To:.*${to.replace(/[.+]/g, '\\$&')}`, 'im').test(text)) continue;
      const match = pattern.exec(text);
      if (match) return match[0];
    }
    if (Date.now() > deadline) throw new Error(`no mail to ${to} with a ${pathPrefix} link in ${folder}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
