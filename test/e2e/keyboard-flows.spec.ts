import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type APIRequestContext, type Locator, type Page } from '@playwright/test';
import { signInAsModerator, trpc, uniqueSuffix } from './pages/directory-fixtures';

/** The main tasks with the keyboard alone: no click after the page is opened. */

async function submitAgent(request: APIRequestContext, name: string, slug: string): Promise<{ id: string }> {
  for (let attempt = 0; ; attempt++) {
    const response = await request.post('/api/v1/submit', {
      data: {
        name,
        tagline: `${name} keeps an eye on things`,
        source_url: `https://${slug}.example.com/agent`,
        description: `${name} watches dashboards and writes a short report every morning.`,
        author: 'E2E Labs',
        capabilities: ['monitoring'],
        categories: ['devops'],
        type: 'devops',
        contact_email: `maintainer+${slug}@example.com`,
      },
    });
    if (response.status() === 429 && attempt < 2) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers()['retry-after'] ?? '5') * 1000 + 250));
      continue;
    }
    expect(response.status(), await response.text()).toBe(201);
    return response.json();
  }
}

const statusOf = async (request: APIRequestContext, id: string): Promise<string> =>
  (await (await request.get(`/api/v1/submissions/${id}`)).json()).status;

test('approve and reject from the keyboard, each taken back once with z before it is sent', async ({ page, request }) => {
  test.setTimeout(60_000);
  const tag = uniqueSuffix();
  const first = await submitAgent(request, `Undo Alpha ${tag}`, `undo-alpha-${tag}`);
  const second = await submitAgent(request, `Undo Bravo ${tag}`, `undo-bravo-${tag}`);
  await signInAsModerator(page);
  await page.goto('/console/submissions');
  const view = page.getByTestId('submissions-view');
  await expect(view).toHaveAttribute('data-busy', 'false');

  // The skip link is the first Tab stop and lands in <main>.
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('skip-link')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('main#main-content')).toBeFocused();

  // "/" searches; Escape leaves the box, so the next keys are shortcuts again.
  await page.keyboard.press('/');
  await page.keyboard.type(tag);
  await expect(page.getByTestId('submission-row')).toHaveCount(2);
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('submissions-search').locator('input')).not.toBeFocused();
  // Newest first: j moves down to the older one, k back up.
  await page.keyboard.press('j');
  await expect(view).toHaveAttribute('data-selected', first.id);
  await page.keyboard.press('k');
  await expect(view).toHaveAttribute('data-selected', second.id);

  // a approves; z within the window takes it back: the row returns and nothing was sent.
  await page.keyboard.press('a');
  await expect(page.locator(`[data-testid="submission-row"][data-id="${second.id}"]`)).toHaveCount(0);
  await expect(page.getByTestId('toast-region')).toContainText(`Approving "Undo Bravo ${tag}"`);
  await page.keyboard.press('z');
  await expect(page.locator(`[data-testid="submission-row"][data-id="${second.id}"]`)).toHaveCount(1);
  await expect(view).toHaveAttribute('data-selected', second.id);
  await expect(page.getByTestId('toast-region')).toContainText('stays pending');
  await page.waitForTimeout(5500);
  expect(await statusOf(request, second.id)).toBe('pending');

  // a again, left alone: sent when the window ends.
  await page.keyboard.press('a');
  await expect(page.getByTestId('toast-region')).toContainText(`Approved "Undo Bravo ${tag}"`);
  expect(await statusOf(request, second.id)).toBe('approved');

  // r asks for a reason (Ctrl+Enter confirms); z takes the rejection back; r again sends it.
  await expect(view).toHaveAttribute('data-selected', first.id);
  await page.keyboard.press('r');
  await expect(page.getByTestId('reject-dialog')).toBeVisible();
  await page.keyboard.type('Not an agent');
  await page.keyboard.press('Control+Enter');
  await expect(page.getByTestId('reject-dialog')).toBeHidden();
  await page.keyboard.press('z');
  await expect(page.locator(`[data-testid="submission-row"][data-id="${first.id}"]`)).toHaveCount(1);
  await page.keyboard.press('r');
  await page.keyboard.type('Not an agent');
  await page.keyboard.press('Control+Enter');
  await expect(page.getByTestId('toast-region')).toContainText(`Rejected "Undo Alpha ${tag}"`);
  expect(await statusOf(request, first.id)).toBe('rejected');
  // At most three toasts at a time.
  expect(await page.locator('.n-message').count()).toBeLessThanOrEqual(3);
});

/** Presses Tab until `target` has the focus, as a keyboard user does; fails after `max` stops. */
async function tabTo(page: Page, target: Locator, max = 60): Promise<void> {
  for (let stop = 0; stop < max; stop++) {
    if (await target.evaluate((element) => element === element.ownerDocument.activeElement || element.contains(element.ownerDocument.activeElement)))
      return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${target} was not reached in ${max} Tab stops`);
}

test('issue an API key from the keyboard: name, key shown once, copied, stored, and it works', async ({ page, request, context, baseURL }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL! });
  const name = `Keyboard key ${uniqueSuffix()}`;
  await signInAsModerator(page);
  await page.goto('/console/api-keys');
  await expect(page.getByTestId('keys-ready').or(page.getByTestId('keys-empty'))).toBeVisible();

  await tabTo(page, page.getByTestId('issue-key'));
  await page.keyboard.press('Enter');
  // The dialog opens with the focus in its name field.
  await expect(page.getByTestId('issue-key-name')).toBeFocused();
  await page.keyboard.type(name);
  await page.keyboard.press('Enter');
  const shown = page.getByTestId('issued-key-value');
  await expect(shown).toHaveValue(/^adk_/);
  const key = await shown.inputValue();

  await tabTo(page, page.getByTestId('copy-key'));
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('copy-key')).toHaveText('Copied');
  expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
  await tabTo(page, page.getByTestId('issued-key-done'));
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('issue-key-dialog')).toBeHidden();
  // The focus goes back to where the dialog was opened from.
  await expect(page.getByTestId('issue-key')).toBeFocused();
  await expect(page.getByTestId('key-row').filter({ hasText: name })).toHaveCount(1);

  const withKey = await request.get('/api/v1/agents?limit=1', { headers: { authorization: `Bearer ${key}` } });
  expect(withKey.status()).toBe(200);
});

test('check a claim from the keyboard: v fetches the proof, fails until the token is published, then verifies', async ({ page, request }) => {
  const tag = uniqueSuffix();
  let served = '';
  const host = http.createServer((incoming, response) => {
    if (incoming.url === '/.well-known/agent-directory-claim.txt' && served) response.writeHead(200).end(`${served}\n`);
    else response.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  try {
    const origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    const submitted = await request.post('/api/v1/submit', {
      data: { name: `Keyboard Claim ${tag}`, tagline: 'Claimed with the keyboard', source_url: `${origin}/agents/${tag}` },
    });
    expect(submitted.status(), await submitted.text()).toBe(201);
    const approved = await trpc<{ agent_id: string }>(request, 'submissions.approve', { id: (await submitted.json()).id }, 'mutation');
    const claimed = await request.post('/api/v1/claims', {
      data: { agent_id: approved.agent_id, claimant_name: 'Kay Board', claimant_email: `kay+${tag}@example.com` },
    });
    expect(claimed.status(), await claimed.text()).toBe(201);
    const claim = (await claimed.json()) as { id: string; verification: { token: string } };

    await signInAsModerator(page);
    await page.goto('/console/claims');
    const view = page.getByTestId('claims-view');
    await expect(view).toHaveAttribute('data-busy', 'false');
    // j walks the queue to the claim.
    for (let step = 0; step < 200 && (await view.getAttribute('data-selected')) !== claim.id; step++) await page.keyboard.press('j');
    await expect(view).toHaveAttribute('data-selected', claim.id);

    await page.keyboard.press('v');
    await expect(page.getByTestId('verify-result')).toHaveAttribute('data-ok', 'false');
    await expect(page.getByTestId('claim-status')).toHaveText('pending');

    served = claim.verification.token;
    await page.keyboard.press('v');
    await expect(page.getByTestId('verify-result')).toHaveAttribute('data-ok', 'true');
    await expect(page.getByTestId('claim-status')).toHaveText('verified');
    expect((await (await request.get(`/api/v1/agents/${approved.agent_id}`)).json()).verified).toBe(true);
  } finally {
    host.closeAllConnections();
    await new Promise<void>((resolve) => host.close(() => resolve()));
  }
});

test('read page 2 of a delivery log from the keyboard', async ({ page, request }) => {
  test.setTimeout(90_000);
  const receiver = http.createServer((incoming, response) => {
    incoming.resume();
    incoming.on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/${uniqueSuffix()}`;
    const endpoint = await trpc<{ id: string }>(request, 'webhooks.create', { url, events: ['review.created'] }, 'mutation');
    // 23 test sends: a first page of 20 and a second of 3.
    for (let send = 0; send < 23; send++) await trpc(request, 'webhooks.sendTest', { id: endpoint.id, event: 'review.created' }, 'mutation');

    await signInAsModerator(page);
    await page.goto(`/console/webhooks?endpoint=${endpoint.id}`);
    const rows = page.getByTestId('delivery-row');
    await expect(rows).toHaveCount(20);
    const pageTwo = page.locator('.n-pagination-item[aria-label="Page 2"]');
    await expect(pageTwo).toHaveAttribute('role', 'button');
    await tabTo(page, pageTwo, 120);
    await page.keyboard.press('Enter');
    await expect(rows).toHaveCount(3);
    await expect(pageTwo).toHaveAttribute('aria-current', 'page');
    await trpc(request, 'webhooks.remove', { id: endpoint.id }, 'mutation');
  } finally {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});
