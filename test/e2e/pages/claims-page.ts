import { expect, type Locator, type Page } from '@playwright/test';
import { SignInPage } from './sign-in-page';

export type ClaimTab = 'pending' | 'verified' | 'rejected';

/** The claims queue: tabs, the list, the evidence pane and its actions. */
export class ClaimsPage {
  readonly view: Locator;
  readonly rows: Locator;
  readonly detail: Locator;
  readonly status: Locator;
  readonly token: Locator;
  readonly copyToken: Locator;
  readonly verificationUrl: Locator;
  readonly lastCheck: Locator;
  readonly verifyNow: Locator;
  readonly verifyManually: Locator;
  readonly reject: Locator;
  readonly verifyResult: Locator;
  readonly conflictWarning: Locator;
  readonly manualDialog: Locator;
  readonly manualNote: Locator;
  readonly manualConfirm: Locator;
  readonly rejectDialog: Locator;
  readonly rejectReason: Locator;
  readonly rejectConfirm: Locator;

  constructor(private readonly page: Page) {
    this.view = page.getByTestId('claims-view');
    this.rows = page.getByTestId('claim-row');
    this.detail = page.getByTestId('claim-detail');
    this.status = page.getByTestId('claim-status');
    this.token = page.getByTestId('claim-token');
    this.copyToken = page.getByTestId('copy-token');
    this.verificationUrl = page.getByTestId('claim-verification-url');
    this.lastCheck = page.getByTestId('claim-last-check');
    this.verifyNow = page.getByTestId('verify-now');
    this.verifyManually = page.getByTestId('verify-manually');
    this.reject = page.getByTestId('claim-reject');
    this.verifyResult = page.getByTestId('verify-result');
    this.conflictWarning = page.getByTestId('conflict-warning');
    this.manualDialog = page.getByTestId('manual-dialog');
    this.manualNote = page.getByTestId('manual-reason').locator('textarea');
    this.manualConfirm = page.getByTestId('manual-confirm');
    this.rejectDialog = page.getByTestId('claim-reject-dialog');
    this.rejectReason = page.getByTestId('claim-reject-reason').locator('textarea');
    this.rejectConfirm = page.getByTestId('claim-reject-confirm');
  }

  async open(adminToken: string): Promise<void> {
    await this.page.goto('/console/claims');
    const signIn = new SignInPage(this.page);
    await expect(signIn.card.or(this.view)).toBeVisible();
    if (await signIn.card.isVisible()) await signIn.signIn(adminToken);
    await expect(this.page).toHaveURL(/\/console\/claims/);
    await expect(this.page.getByTestId('page-title')).toHaveText('Claims');
    await this.expectSettled();
  }

  async expectSettled(): Promise<void> {
    await expect(this.view).toHaveAttribute('data-busy', 'false');
  }

  count(status: ClaimTab): Locator {
    return this.page.getByTestId(`claims-count-${status}`);
  }

  row(id: string): Locator {
    return this.page.locator(`[data-testid="claim-row"][data-id="${id}"]`);
  }

  /** Selects a claim; newest first, so a claim just made is on the first page. */
  async select(id: string): Promise<void> {
    await this.row(id).click();
    await expect(this.view).toHaveAttribute('data-selected', id);
    await expect(this.detail).toHaveAttribute('data-id', id);
  }
}
