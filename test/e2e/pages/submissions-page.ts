import { expect, type Locator, type Page } from '@playwright/test';
import { SignInPage } from './sign-in-page';

export type SubmissionTab = 'pending' | 'approved' | 'rejected';

/** The submissions queue: tabs, search, the virtual list, the detail pane and the dialogs. */
export class SubmissionsPage {
  readonly view: Locator;
  readonly search: Locator;
  readonly rows: Locator;
  readonly detail: Locator;
  readonly detailName: Locator;
  readonly detailStatus: Locator;
  readonly approveButton: Locator;
  readonly rejectButton: Locator;
  readonly editButton: Locator;
  readonly conflictWarning: Locator;
  readonly duplicatesHint: Locator;
  readonly rejectDialog: Locator;
  readonly rejectTemplate: Locator;
  readonly rejectReason: Locator;
  readonly rejectConfirm: Locator;
  readonly help: Locator;
  readonly bulkBar: Locator;
  readonly bulkApprove: Locator;
  readonly bulkReject: Locator;
  readonly bulkResult: Locator;
  readonly bulkResultItems: Locator;
  readonly footer: Locator;
  readonly empty: Locator;

  constructor(private readonly page: Page) {
    this.view = page.getByTestId('submissions-view');
    this.search = page.getByTestId('submissions-search').locator('input');
    this.rows = page.getByTestId('submission-row');
    this.detail = page.getByTestId('submission-detail');
    this.detailName = page.getByTestId('detail-name');
    this.detailStatus = page.getByTestId('detail-status');
    this.approveButton = page.getByTestId('approve-button');
    this.rejectButton = page.getByTestId('reject-button');
    this.editButton = page.getByTestId('edit-button');
    this.conflictWarning = page.getByTestId('conflict-warning');
    this.duplicatesHint = page.getByTestId('duplicates-hint');
    this.rejectDialog = page.getByTestId('reject-dialog');
    this.rejectTemplate = page.getByTestId('reject-template');
    this.rejectReason = page.getByTestId('reject-reason').locator('textarea');
    this.rejectConfirm = page.getByTestId('reject-confirm');
    this.help = page.getByTestId('shortcut-help');
    this.bulkBar = page.getByTestId('bulk-bar');
    this.bulkApprove = page.getByTestId('bulk-approve');
    this.bulkReject = page.getByTestId('bulk-reject');
    this.bulkResult = page.getByTestId('bulk-result');
    this.bulkResultItems = page.getByTestId('bulk-result-item');
    this.footer = page.getByTestId('submissions-footer');
    this.empty = page.getByTestId('submissions-empty');
  }

  /** Opens the queue at `origin` (signing in on the way when needed) and waits for the first page. */
  async open(adminToken: string, origin = ''): Promise<void> {
    await this.page.goto(`${origin}/console/submissions`);
    const signIn = new SignInPage(this.page);
    await expect(signIn.card.or(this.view)).toBeVisible();
    if (await signIn.card.isVisible()) await signIn.signIn(adminToken);
    await expect(this.page).toHaveURL(/\/console\/submissions/);
    await expect(this.page.getByTestId('page-title')).toHaveText('Submissions');
    await this.expectSettled();
  }

  /** No list request in flight. */
  async expectSettled(): Promise<void> {
    await expect(this.view).toHaveAttribute('data-busy', 'false');
  }

  tab(status: SubmissionTab): Locator {
    return this.page.getByTestId(`submissions-tab-${status}`);
  }

  count(status: SubmissionTab): Locator {
    return this.page.getByTestId(`submissions-count-${status}`);
  }

  async showTab(status: SubmissionTab): Promise<void> {
    await this.tab(status).click();
    await expect(this.view).toHaveAttribute('data-status', status);
    await this.expectSettled();
  }

  /** Types into the search box and waits for the list to show that search's answer. */
  async searchFor(text: string): Promise<void> {
    await this.search.fill(text);
    await expect(this.view).toHaveAttribute('data-query', text);
    await this.expectSettled();
  }

  row(id: string): Locator {
    return this.page.locator(`[data-testid="submission-row"][data-id="${id}"]`);
  }

  /** Clicks a row (which also takes the focus out of the search box, so shortcuts work). */
  async select(id: string): Promise<void> {
    await this.row(id).locator('td').last().click();
    await this.expectSelected(id);
  }

  async expectSelected(id: string): Promise<void> {
    await expect(this.view).toHaveAttribute('data-selected', id);
    await expect(this.detail).toHaveAttribute('data-id', id);
  }

  async check(id: string): Promise<void> {
    await this.row(id).locator('.n-checkbox').click();
  }

  /** Rejects the selected submission with a template, edited. */
  async rejectSelected(templateLabel: string, extra = ''): Promise<void> {
    await this.rejectButton.click();
    await expect(this.rejectDialog).toBeVisible();
    await this.rejectTemplate.click();
    // naive-ui's select options are plain elements, not ARIA options.
    await this.page.locator('.n-base-select-option', { hasText: templateLabel }).click();
    if (extra) await this.rejectReason.press('End').then(() => this.rejectReason.pressSequentially(extra));
  }
}
