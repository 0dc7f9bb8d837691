import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { createConfig, databasePath } from '../../src-api/config';
import { openDatabase } from '../../src-api/db/client';
import { createServices } from '../../src-api/services';
import { mockProcedures, serverError, settled } from './pages/console-api';
import { expectRelativeTime } from './pages/date-time';
import { SubmissionsPage } from './pages/submissions-page';

const adminToken = process.env.AGENTDIR_E2E_ADMIN_TOKEN!;
const shot = (name: string) => path.join('test-results', 'screenshots', name);
const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

interface Submission {
  id: string;
  name: string;
  tagline: string;
  status: 'pending' | 'approved' | 'rejected';
  agent_id?: string;
  reason?: string;
}

/** The console's tRPC API over HTTP, as the web build calls it. */
async function trpc<T>(request: APIRequestContext, procedure: string, input?: unknown, kind: 'query' | 'mutation' = 'query'): Promise<T> {
  const headers = { authorization: `Bearer ${adminToken}` };
  const response =
    kind === 'query'
      ? await request.get(`/trpc/${procedure}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, {
          headers,
        })
      : await request.post(`/trpc/${procedure}`, { headers, data: input ?? {} });
  expect(response.status(), await response.text()).toBe(200);
  return (await response.json()).result.data as T;
}

/**
 * POST /api/v1/submit as a member of the public would. The write limit (20 a minute per IP) is
 * shared with every spec of the run, so a 429 waits for the window its Retry-After names.
 */
async function submitAgent(request: APIRequestContext, body: Record<string, unknown>): Promise<Submission> {
  for (let attempt = 0; ; attempt++) {
    const response = await request.post('/api/v1/submit', { data: body });
    if (response.status() === 429 && attempt < 2) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers()['retry-after'] ?? '5') * 1000 + 250));
      continue;
    }
    expect(response.status(), await response.text()).toBe(201);
    return response.json();
  }
}

function submissionBody(name: string, slug: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    tagline: `${name} keeps an eye on things`,
    source_url: `https://${slug}.example.com/agent`,
    description: `${name} watches dashboards and writes a short report every morning.`,
    author: 'E2E Labs',
    capabilities: ['monitoring', 'reporting'],
    categories: ['devops'],
    type: 'devops',
    contact_email: `maintainer+${slug}@example.com`,
    ...extra,
  };
}

const publicSubmission = async (request: APIRequestContext, id: string): Promise<Submission> =>
  (await request.get(`/api/v1/submissions/${id}`)).json();

async function auditActions(request: APIRequestContext, entityId: string): Promise<string[]> {
  const audit = await trpc<{ entries: { actor: string; action: string }[] }>(request, 'audit.list', { entityId });
  return audit.entries.map((entry) => `${entry.actor} ${entry.action}`);
}

test.describe('submissions queue', () => {
  test.describe.configure({ timeout: 120_000 });

  test('approving lists the agent: the public search finds it at once, and duplicates are pointed out', async ({ page, request }) => {
    const tag = unique();
    const name = `Nimbus Cartographer ${tag}`;
    const submission = await submitAgent(request, submissionBody(name, `nimbus-${tag}`));

    const queue = new SubmissionsPage(page);
    await queue.open(adminToken);
    await queue.searchFor(tag);
    await expect(queue.rows).toHaveCount(1);
    await queue.select(submission.id);
    await expect(queue.detailName).toHaveText(name);
    await expect(queue.detailStatus).toHaveText('pending');
    await expect(page.getByTestId('detail-contact-email')).toHaveText(`maintainer+nimbus-${tag}@example.com`);
    // Dates in the detail pane read as in the list: relative, the absolute time in the tooltip.
    await expectRelativeTime(page.getByTestId('submission-submitted'));
    const source = page.getByTestId('detail-source-link');
    await expect(source).toHaveAttribute('href', `https://nimbus-${tag}.example.com/agent`);
    await expect(source).toHaveAttribute('target', '_blank');
    await expect(page.getByTestId('duplicates-none')).toBeVisible();
    await page.screenshot({ path: shot('20-submissions-queue.png') });

    await queue.approveButton.click();
    await expect(queue.row(submission.id)).toHaveCount(0);
    await expect(page.getByText(`Approved "${name}"`)).toBeVisible();

    const decided = await publicSubmission(request, submission.id);
    expect(decided).toMatchObject({ status: 'approved', agent_id: expect.any(String) });
    const search = await (await request.get(`/api/v1/agents/search?q=${encodeURIComponent(name)}`)).json();
    expect(search.agents[0]).toMatchObject({ id: decided.agent_id, name, verified: false });
    expect(await auditActions(request, submission.id)).toEqual(['admin-token submission.approve']);
    expect(await auditActions(request, decided.agent_id!)).toContain('admin-token agent.create');

    // The tab counts follow the decision.
    const counts = await trpc<Record<string, number>>(request, 'submissions.counts');
    await expect(queue.count('approved')).toHaveText(counts.approved!.toLocaleString('en-US'));

    // A second submission from the same host with a similar name is flagged as a possible duplicate.
    const again = await submitAgent(
      request,
      submissionBody(`${name} Pro`, `nimbus-${tag}`, { source_url: `https://nimbus-${tag}.example.com/pro` }),
    );
    await page.getByTestId('submissions-refresh').click();
    await queue.expectSettled();
    await queue.select(again.id);
    const duplicate = page.getByTestId('duplicate-agent');
    await expect(duplicate).toContainText(name);
    await expect(duplicate).toContainText('similar name · same source');
    await queue.detail.screenshot({ path: shot('21-submissions-detail-duplicates.png') });
  });

  test('rejecting asks for a reason, which the submitter then sees', async ({ page, request }) => {
    const tag = unique();
    const submission = await submitAgent(request, submissionBody(`Murky Oracle ${tag}`, `murky-${tag}`));

    const queue = new SubmissionsPage(page);
    await queue.open(adminToken);
    await queue.searchFor(tag);
    await queue.select(submission.id);

    // An empty reason is refused before anything is sent.
    await queue.rejectButton.click();
    await expect(queue.rejectDialog).toBeVisible();
    await queue.rejectConfirm.click();
    await expect(queue.rejectDialog).toContainText('A reason is required');
    await page.getByTestId('reject-cancel').click();
    await expect(queue.rejectDialog).toBeHidden();

    await queue.rejectSelected('Insufficient description', ' It also needs a usage example.');
    await expect(queue.rejectReason).toHaveValue(/^The description does not say what the agent does\..* It also needs a usage example\.$/);
    await settled(page);
    await page.screenshot({ path: shot('22-submissions-reject-dialog.png') });
    await queue.rejectConfirm.click();
    await expect(queue.rejectDialog).toBeHidden();
    await expect(queue.row(submission.id)).toHaveCount(0);
    // Sent once the undo window has passed.
    await expect(page.getByText(`Rejected "Murky Oracle ${tag}"`)).toBeVisible();

    const rejected = await publicSubmission(request, submission.id);
    expect(rejected.status).toBe('rejected');
    expect(rejected.reason).toMatch(/^The description does not say what the agent does\..* It also needs a usage example\.$/);
    expect(await auditActions(request, submission.id)).toEqual(['admin-token submission.reject']);

    // The rejected tab shows it with its reason.
    await queue.showTab('rejected');
    await queue.select(submission.id);
    await expect(queue.detailStatus).toHaveText('rejected');
    await expect(page.getByTestId('detail-reason')).toContainText('It also needs a usage example.');
    await expect(queue.approveButton).toHaveCount(0);
    await page.screenshot({ path: shot('23-submissions-rejected-tab.png') });
  });

  test('the keyboard alone moves through the queue and decides (j, k, a, x, r, ?)', async ({ page, request }) => {
    const tag = unique();
    const first = await submitAgent(request, submissionBody(`Keyboard Alpha ${tag}`, `kb-alpha-${tag}`));
    const second = await submitAgent(request, submissionBody(`Keyboard Bravo ${tag}`, `kb-bravo-${tag}`));
    const third = await submitAgent(request, submissionBody(`Keyboard Charlie ${tag}`, `kb-charlie-${tag}`));

    const queue = new SubmissionsPage(page);
    await queue.open(adminToken);
    await queue.searchFor(tag);
    await expect(queue.rows).toHaveCount(3);
    // Newest first: third, second, first. Clicking leaves the search box, so keys are shortcuts again.
    await queue.select(third.id);

    await page.keyboard.press('j');
    await queue.expectSelected(second.id);
    await page.keyboard.press('j');
    await queue.expectSelected(first.id);
    await page.keyboard.press('k');
    await queue.expectSelected(second.id);

    await page.keyboard.press('?');
    await expect(queue.help).toBeVisible();
    await expect(queue.help).toContainText('Approve the selected submission');
    await settled(page);
    await page.screenshot({ path: shot('24-submissions-shortcut-help.png') });
    // While the help is open, other keys do nothing.
    await page.keyboard.press('a');
    await page.keyboard.press('?');
    await expect(queue.help).toBeHidden();
    expect((await publicSubmission(request, second.id)).status).toBe('pending');

    await page.keyboard.press('a');
    await expect(queue.row(second.id)).toHaveCount(0);
    // The selection moves on to the next submission.
    await queue.expectSelected(first.id);
    await expect.poll(async () => (await publicSubmission(request, second.id)).status).toBe('approved');

    await page.keyboard.press('x');
    await expect(queue.bulkBar).toContainText('1 submission checked');
    await page.keyboard.press('x');
    await expect(queue.bulkBar).toBeHidden();

    // r opens the reason dialog; letters typed there are text, not shortcuts; Ctrl+Enter confirms.
    await page.keyboard.press('r');
    await expect(queue.rejectDialog).toBeVisible();
    await expect(queue.rejectReason).toBeFocused();
    await page.keyboard.type('Just a joke, not a real agent');
    await page.keyboard.press('Control+Enter');
    await expect(queue.rejectDialog).toBeHidden();
    await expect(queue.row(first.id)).toHaveCount(0);
    await queue.expectSelected(third.id);

    await expect.poll(async () => (await publicSubmission(request, first.id)).status).toBe('rejected');
    expect(await publicSubmission(request, first.id)).toMatchObject({ status: 'rejected', reason: 'Just a joke, not a real agent' });
    expect((await publicSubmission(request, third.id)).status).toBe('pending');
    expect(await auditActions(request, second.id)).toEqual(['admin-token submission.approve']);
    expect(await auditActions(request, first.id)).toEqual(['admin-token submission.reject']);
  });

  test('the status tabs are a tablist: one Tab stop, arrow keys move and open, Enter and Space open', async ({ page }) => {
    const queue = new SubmissionsPage(page);
    await queue.open(adminToken);
    const approved = page.getByTestId('submissions-tab-approved');
    await approved.focus();
    await expect(approved).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(queue.view).toHaveAttribute('data-status', 'approved');
    await expect(approved).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByRole('tablist').getByRole('tab')).toHaveCount(3);
    await expect(approved).toHaveAttribute('tabindex', '0');
    await expect(page.getByTestId('submissions-tab-pending')).toHaveAttribute('tabindex', '-1');
    // The left arrow goes back to the previous tab and opens it; Space opens the focused tab too.
    await page.keyboard.press('ArrowLeft');
    await expect(page.getByTestId('submissions-tab-pending')).toBeFocused();
    await expect(queue.view).toHaveAttribute('data-status', 'pending');
    await page.keyboard.press('Space');
    await expect(queue.view).toHaveAttribute('data-status', 'pending');
  });

  test('a submission changed by another moderator is not decided on stale data: a warning, then the fresh version', async ({
    page,
    request,
  }) => {
    const tag = unique();
    const submission = await submitAgent(request, submissionBody(`Stale Sparrow ${tag}`, `stale-${tag}`));

    const queue = new SubmissionsPage(page);
    await queue.open(adminToken);
    await queue.searchFor(tag);
    await queue.select(submission.id);
    await expect(queue.detail).toContainText('version 1');

    // The moderator fixes the name first (only changed fields are sent; the version goes up).
    const editDialog = page.getByTestId('edit-dialog');
    await queue.editButton.click();
    await expect(editDialog).toBeVisible();
    await expect(page.getByTestId('edit-save')).toBeDisabled();
    await page.getByTestId('edit-name').locator('input').fill(`Stale Sparrow ${tag} (edited)`);
    await settled(page);
    await page.screenshot({ path: shot('25-submissions-edit-dialog.png') });
    await page.getByTestId('edit-save').click();
    await expect(editDialog).toBeHidden();
    await expect(queue.detailName).toHaveText(`Stale Sparrow ${tag} (edited)`);
    await expect(queue.detail).toContainText('version 2');

    // Meanwhile, another moderator corrects the tagline.
    await trpc(request, 'submissions.update', { id: submission.id, patch: { tagline: 'Corrected by a colleague' } }, 'mutation');

    await queue.approveButton.click();
    await expect(queue.conflictWarning).toBeVisible();
    await expect(queue.conflictWarning).toContainText('changed by another moderator');
    await expect(page.getByText('Changed by another moderator: the submission was reloaded')).toBeVisible();
    // Reloaded: the colleague's change is on screen, and nothing was decided.
    await expect(queue.detail).toContainText('Corrected by a colleague');
    await expect(queue.detail).toContainText('version 3');
    await page.screenshot({ path: shot('26-submissions-conflict-warning.png') });
    expect((await publicSubmission(request, submission.id)).status).toBe('pending');

    // Having seen the new version, the moderator approves it.
    await queue.approveButton.click();
    await expect(queue.row(submission.id)).toHaveCount(0);
    await expect(page.getByText(`Approved "Stale Sparrow ${tag} (edited)"`)).toBeVisible();
    expect((await publicSubmission(request, submission.id)).status).toBe('approved');
    expect(await auditActions(request, submission.id)).toEqual([
      'admin-token submission.approve',
      'admin-token submission.update',
      'admin-token submission.update',
    ]);
  });

  test('bulk approve decides each checked item on its own and reports per item', async ({ page, request }) => {
    const tag = unique();
    const items = [];
    for (const word of ['One', 'Two', 'Three'])
      items.push(await submitAgent(request, submissionBody(`Bulk ${word} ${tag}`, `bulk-${word}-${tag}`)));

    const queue = new SubmissionsPage(page);
    await queue.open(adminToken);
    await queue.searchFor(tag);
    await expect(queue.rows).toHaveCount(3);
    for (const item of items) await queue.check(item.id);
    await expect(queue.bulkBar).toContainText('3 submissions checked');

    // One of them changes meanwhile: it must fail alone.
    await trpc(request, 'submissions.update', { id: items[1]!.id, patch: { name: `Bulk Two (renamed) ${tag}` } }, 'mutation');

    await queue.bulkApprove.click();
    await page.getByRole('button', { name: 'Approve all' }).click();
    await expect(queue.bulkResult).toBeVisible();
    await expect(page.getByTestId('bulk-summary')).toHaveText('2 approved, 1 not.');
    await expect(queue.bulkResultItems.filter({ hasText: 'changed by another moderator' })).toHaveCount(1);
    await settled(page);
    await page.screenshot({ path: shot('27-submissions-bulk-result.png') });
    await page.getByTestId('bulk-result-close').click();

    expect((await publicSubmission(request, items[0]!.id)).status).toBe('approved');
    expect((await publicSubmission(request, items[1]!.id)).status).toBe('pending');
    expect((await publicSubmission(request, items[2]!.id)).status).toBe('approved');
    // The failed one stays in the queue, reloaded with its new name.
    await expect(queue.row(items[1]!.id)).toContainText('Bulk Two (renamed)');
    await expect(queue.rows).toHaveCount(1);
    expect(await auditActions(request, items[0]!.id)).toEqual(['admin-token submission.approve']);
  });
});

test('an empty queue and a failed load say so', async ({ page }) => {
  const queue = new SubmissionsPage(page);
  const unmock = await mockProcedures(page, {
    'submissions.list': { data: { submissions: [], page: 1, limit: 100, total: 0 } },
    'submissions.counts': { data: { pending: 0, approved: 0, rejected: 0 } },
  });
  await queue.open(adminToken);
  await expect(queue.empty).toContainText('The queue is empty');
  await expect(queue.count('pending')).toHaveText('0');
  await page.screenshot({ path: shot('29-submissions-empty.png') });
  await unmock();

  await mockProcedures(page, { 'submissions.list': serverError });
  await page.getByTestId('submissions-refresh').click();
  await expect(page.getByTestId('submissions-error')).toContainText('The queue could not be loaded');
  await page.mouse.move(640, 600);
  await settled(page);
  await page.screenshot({ path: shot('29-submissions-error.png') });
});

/**
 * 10,000 pending submissions: a second server on its own data dir, filled in-process
 * through the services before it starts. The list must ask for at most 100 rows per call
 * and keep only the visible rows in the DOM.
 */
test.describe('a queue of 10,000 pending submissions', () => {
  const TOTAL = 10_000;
  let dataDir: string;
  let origin: string;
  let child: ChildProcess | undefined;

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-e2e-10k-'));
    const config = createConfig({ dataDir, demoData: false });
    const db = openDatabase(databasePath(config));
    const services = createServices({ db, config });
    // One transaction around them all (each submit a savepoint in it): one commit, not 10,000.
    await services.store.transaction(async () => {
      for (let i = 0; i < TOTAL; i++) {
        await services.submissions.submit({
          name: `Bulk Seeded Agent ${String(i).padStart(5, '0')}`,
          tagline: `Seeded submission number ${i} for the smoothness check`,
          source_url: `https://seed-${i}.example.org/agent`,
          description: '',
          author: 'Seeder',
          capabilities: [],
          categories: [],
          type: 'other',
        });
      }
    });
    db.$client.close();

    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src-api/serve.ts', '--port', String(port), '--data-dir', dataDir, '--no-demo-data', '--rate-limit', 'off'],
      { env: { ...process.env, AGENTDIR_ADMIN_TOKEN: adminToken }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    await listening(child);
  });

  test.afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('pages the list call (≤ 100 rows each) and renders only the visible rows', async ({ page }) => {
    const limits: number[] = [];
    page.on('request', (request) => {
      const limit = listLimit(request.url());
      if (limit !== undefined) limits.push(limit);
    });

    const queue = new SubmissionsPage(page);
    await queue.open(adminToken, origin);
    await expect(queue.count('pending')).toHaveText('10,000');
    await expect(queue.footer).toContainText('Showing 100 of 10,000 submissions');
    expect(await queue.rows.count()).toBeLessThan(200);

    // Scrolling to the end of what is loaded fetches the next page, and the next.
    const scroller = page.getByTestId('submission-list').locator('.v-vl');
    for (const loaded of ['200', '300']) {
      await scroller.evaluate((element) => element.scrollTo({ top: element.scrollHeight }));
      await expect(queue.footer).toContainText(`Showing ${loaded} of 10,000`);
    }
    await queue.expectSettled();
    const rendered = await queue.rows.count();
    expect(rendered).toBeGreaterThan(0);
    expect(rendered).toBeLessThan(200);

    // Keys still move the selection instantly at the far end of the loaded rows.
    const last = page.locator('[data-testid="submission-row"]').last();
    await last.locator('td').last().click();
    await page.keyboard.press('j');
    await expect(queue.detail).toBeVisible();
    await expect(page.getByTestId('duplicates-loading')).toBeHidden();
    await page.screenshot({ path: shot('28-submissions-10k-pending.png') });

    expect(limits.length).toBeGreaterThanOrEqual(3);
    for (const limit of limits) expect(limit).toBeLessThanOrEqual(100);
  });
});

/** The `limit` of a submissions.list call in a (possibly batched) tRPC GET, if the URL is one. */
function listLimit(raw: string): number | undefined {
  const url = new URL(raw);
  if (!url.pathname.startsWith('/trpc/')) return undefined;
  const procedures = url.pathname.slice('/trpc/'.length).split(',');
  const index = procedures.indexOf('submissions.list');
  if (index < 0) return undefined;
  const input = JSON.parse(url.searchParams.get('input') ?? '{}');
  const own = url.searchParams.get('batch') ? input[String(index)] : input;
  return Number(own?.limit ?? 20);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once `serve` prints its API URL; rejects with its stderr if it exits first. */
function listening(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Agent Directory API:')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}
