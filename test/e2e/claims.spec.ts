import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { expectAccessible } from './pages/accessibility';
import { ClaimsPage } from './pages/claims-page';
import { mockProcedures, serverError, settled } from './pages/console-api';

const adminToken = process.env.AGENTDIR_E2E_ADMIN_TOKEN!;
const shot = (name: string) => path.join('test-results', 'screenshots', name);
const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const WELL_KNOWN = '/.well-known/agent-directory-claim.txt';

interface NewClaim {
  id: string;
  agent_id: string;
  status: string;
  verification: { url: string; token: string };
}

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

/** A public write; the per-IP write limit is shared by the whole run, so a 429 waits out its Retry-After. */
async function publicPost(request: APIRequestContext, route: string, data?: unknown, expected = 201) {
  for (let attempt = 0; ; attempt++) {
    const response = await request.post(`/api/v1${route}`, data === undefined ? {} : { data });
    if (response.status() === 429 && attempt < 2) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers()['retry-after'] ?? '5') * 1000 + 250));
      continue;
    }
    expect(response.status(), await response.text()).toBe(expected);
    return response.json();
  }
}

/**
 * The agent's host: a real HTTP server on 127.0.0.1 (the e2e server runs with
 * --allow-private-urls) serving the well-known file with whatever token is set.
 */
let host: http.Server;
let hostOrigin: string;
let servedTokens: string[] = [];

test.beforeAll(async () => {
  host = http.createServer((request, response) => {
    if (request.url === WELL_KNOWN && servedTokens.length)
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`${servedTokens.join('\n')}\n`);
    else response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  hostOrigin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
});
test.afterAll(async () => {
  host.closeAllConnections();
  await new Promise<void>((resolve) => host.close(() => resolve()));
});

/** A listed agent on the local host (submitted through the public API, approved through the console's API) and a claim on it. */
async function claimedAgent(request: APIRequestContext, label: string) {
  const tag = unique();
  const name = `${label} ${tag}`;
  const submission = await publicPost(request, '/submit', {
    name,
    tagline: 'Proves who owns it',
    source_url: `${hostOrigin}/agents/${tag}`,
  });
  const approved = await trpc<{ agent_id: string }>(request, 'submissions.approve', { id: submission.id }, 'mutation');
  const claim: NewClaim = await publicPost(request, '/claims', {
    agent_id: approved.agent_id,
    claimant_name: 'Rosalind Maintainer',
    claimant_email: `rosalind+${tag}@example.com`,
  });
  expect(claim.verification.url).toBe(`${hostOrigin}${WELL_KNOWN}`);
  return { name, agentId: approved.agent_id, claim };
}

const agentVerified = async (request: APIRequestContext, agentId: string): Promise<boolean> =>
  (await (await request.get(`/api/v1/agents/${agentId}`)).json()).verified;

async function auditActions(request: APIRequestContext, entityId: string): Promise<string[]> {
  const audit = await trpc<{ entries: { actor: string; action: string }[] }>(request, 'audit.list', { entityId });
  return audit.entries.map((entry) => `${entry.actor} ${entry.action}`);
}

test.describe('claims', () => {
  test.describe.configure({ timeout: 120_000 });

  test('"Verify now" runs the well-known check: the failure says why, success verifies the agent', async ({
    page,
    request,
    context,
    baseURL,
  }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL! });
    const { name, agentId, claim } = await claimedAgent(request, 'Lighthouse Keeper');

    const claims = new ClaimsPage(page);
    await claims.open(adminToken);
    await claims.select(claim.id);
    await expect(page.getByTestId('claim-agent-name')).toHaveText(name);
    await expect(page.getByTestId('claim-email')).toHaveText(/^rosalind\+.*@example\.com$/);
    await expect(claims.verificationUrl).toHaveAttribute('href', `${hostOrigin}${WELL_KNOWN}`);
    await expect(claims.token).toHaveText(claim.verification.token);
    await expect(claims.lastCheck).toHaveText('Not checked yet');
    await claims.copyToken.click();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(claim.verification.token);
    await page.screenshot({ path: shot('10-claims-queue.png') });

    // Nothing served yet: the 422 detail is shown and kept as the last check.
    await claims.verifyNow.click();
    await expect(claims.verifyResult).toHaveAttribute('data-ok', 'false');
    await expect(claims.verifyResult).toContainText('HTTP 404');
    await expect(claims.lastCheck).toContainText('failed');
    await expect(claims.status).toHaveText('pending');
    // The queue row says why in words, not a bare status code.
    await expect(claims.row(claim.id)).toContainText('check failed · HTTP 404');
    await claims.detail.screenshot({ path: shot('11-claims-verify-failed.png') });
    expect(await agentVerified(request, agentId)).toBe(false);

    // A file without the token answers 200: the row says the token was not found, not "200".
    servedTokens = ['not-the-token'];
    await claims.verifyNow.click();
    await expect(claims.row(claim.id)).toContainText('check failed · token not found');

    // The claimant publishes the token: the next check verifies the claim and the agent.
    servedTokens = [claim.verification.token];
    await claims.verifyNow.click();
    await expect(claims.verifyResult).toHaveAttribute('data-ok', 'true');
    await expect(claims.verifyResult).toContainText('The token was found');
    await expect(claims.status).toHaveText('verified');
    await expect(claims.lastCheck).toContainText('HTTP 200');
    await claims.detail.screenshot({ path: shot('12-claims-detail-verified.png') });

    expect(await agentVerified(request, agentId)).toBe(true);
    expect((await (await request.get(`/api/v1/claims/${claim.id}`)).json()).status).toBe('verified');
    expect((await auditActions(request, claim.id)).sort()).toEqual([
      'admin-token claim.check',
      'admin-token claim.check',
      'admin-token claim.verify',
    ]);
  });

  test('a claim checked meanwhile is not decided on stale data; verifying by hand then works', async ({ page, request }) => {
    const { agentId, claim } = await claimedAgent(request, 'Harbour Pilot');

    const claims = new ClaimsPage(page);
    await claims.open(adminToken);
    await claims.select(claim.id);
    await expect(claims.detail).toContainText('version 1');

    // The claimant runs the public check in the background; it fails (their token is not served) and the claim changes.
    await publicPost(request, `/claims/${claim.id}/verify`, undefined, 422);

    await claims.verifyManually.click();
    await expect(claims.manualDialog).toBeVisible();
    await claims.manualNote.fill('Confirmed by e-mail from the repository owner');
    await settled(page);
    await page.screenshot({ path: shot('13-claims-manual-dialog.png') });
    await claims.manualConfirm.click();
    await expect(claims.conflictWarning).toBeVisible();
    await expect(claims.conflictWarning).toContainText('changed by another moderator');
    await expect(claims.detail).toContainText('version 2');
    await expect(claims.lastCheck).toContainText('failed');
    await settled(page);
    await page.screenshot({ path: shot('14-claims-conflict-warning.png') });
    expect(await agentVerified(request, agentId)).toBe(false);

    await claims.verifyManually.click();
    await claims.manualNote.fill('Confirmed by e-mail from the repository owner');
    await claims.manualConfirm.click();
    // Held for the undo window, then sent: the row leaves the pending tab at once.
    await expect(claims.row(claim.id)).toHaveCount(0);
    await expect(page.getByText('Verified by hand:')).toBeVisible();
    await expect(claims.conflictWarning).toBeHidden();
    expect(await agentVerified(request, agentId)).toBe(true);
    const audit = await trpc<{ entries: { action: string; after: { verified_by?: string; note?: string } }[] }>(request, 'audit.list', {
      entityId: claim.id,
    });
    expect(audit.entries[0]).toMatchObject({
      action: 'claim.verify',
      after: { verified_by: 'manual', note: 'Confirmed by e-mail from the repository owner' },
    });
  });

  test('rejecting a claim asks for a reason, which the claimant sees', async ({ page, request }) => {
    const { agentId, claim } = await claimedAgent(request, 'Signal Tower');

    const claims = new ClaimsPage(page);
    await claims.open(adminToken);
    await claims.select(claim.id);
    await claims.reject.click();
    await expect(claims.rejectDialog).toBeVisible();
    await claims.rejectConfirm.click();
    await expect(claims.rejectDialog).toContainText('A reason is required');
    await claims.rejectReason.fill('The e-mail address does not belong to the project');
    await settled(page);
    await page.screenshot({ path: shot('15-claims-reject-dialog.png') });
    await claims.rejectConfirm.click();
    await expect(claims.rejectDialog).toBeHidden();
    // Held with an Undo: taken back, nothing reaches the server and the claim is back, selected.
    await expect(claims.row(claim.id)).toHaveCount(0);
    await page.getByTestId('undo-decision').click();
    await expect(claims.row(claim.id)).toHaveCount(1);
    await expect(claims.detail).toHaveAttribute('data-id', claim.id);
    await expect(page.getByText('stays pending')).toBeVisible();
    expect((await (await request.get(`/api/v1/claims/${claim.id}`)).json()).status).toBe('pending');

    await claims.reject.click();
    await claims.rejectReason.fill('The e-mail address does not belong to the project');
    await claims.rejectConfirm.click();
    await expect(claims.row(claim.id)).toHaveCount(0);
    await expect(page.getByText(/Claim on ".*" rejected\./)).toBeVisible();
    await page.getByTestId('claims-tab-rejected').click();
    await claims.expectSettled();
    await claims.select(claim.id);
    await expect(claims.status).toHaveText('rejected');
    await expect(page.getByTestId('claim-reason')).toContainText('does not belong to the project');

    expect(await (await request.get(`/api/v1/claims/${claim.id}`)).json()).toMatchObject({
      status: 'rejected',
      reason: 'The e-mail address does not belong to the project',
    });
    expect(await agentVerified(request, agentId)).toBe(false);
    expect(await auditActions(request, claim.id)).toEqual(['admin-token claim.reject']);

    // The verified tab lists decided claims; the counts follow.
    const counts = await trpc<Record<string, number>>(request, 'claims.counts');
    await expect(claims.count('rejected')).toHaveText(counts.rejected!.toLocaleString('en-US'));
    await page.getByTestId('claims-tab-verified').click();
    await claims.expectSettled();
    await expect(claims.view).toHaveAttribute('data-status', 'verified');
    await page.screenshot({ path: shot('16-claims-verified-tab.png') });
  });

  test('competing claims on one agent sit together; verifying one by hand (undone once with z) rejects the other at once', async ({
    page,
    request,
  }) => {
    servedTokens = [];
    const { name, agentId, claim: first } = await claimedAgent(request, 'Contested Beacon');
    const { claim: elsewhere } = await claimedAgent(request, 'Quiet Neighbour');
    const rival: NewClaim = await publicPost(request, '/claims', {
      agent_id: agentId,
      claimant_name: 'Mallory Rival',
      claimant_email: `mallory+${unique()}@example.com`,
    });

    const claims = new ClaimsPage(page);
    await claims.open(adminToken);
    // Newest first would put the other agent's claim between them; grouped by agent they are neighbours.
    const ids = await claims.rows.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-id')));
    expect(ids.indexOf(first.id)).toBe(ids.indexOf(rival.id) + 1);
    expect(ids.indexOf(elsewhere.id)).toBeGreaterThan(ids.indexOf(first.id));
    await expect(claims.row(rival.id)).toHaveAttribute('data-group', 'first');
    await expect(claims.row(first.id)).toHaveAttribute('data-group', 'last');
    await expect(claims.row(first.id).getByTestId('claim-competing')).toHaveText('2 competing');
    await expect(claims.row(elsewhere.id).getByTestId('claim-competing')).toHaveCount(0);

    // A failed check first (nothing served): red in the pending tab, with the reason as recorded.
    await claims.select(first.id);
    await claims.verifyNow.click();
    await expect(claims.verifyResult).toHaveAttribute('data-ok', 'false');
    await expect(claims.row(first.id)).toContainText('check failed · HTTP 404');
    await expect(page.getByTestId('claim-proof-result').first()).toContainText('Well-known file');
    await expect(page.getByTestId('claim-proof-result').first()).toContainText('HTTP 404');

    // The other claim on the agent is listed beside the evidence.
    const competitor = page.getByTestId('claim-competitor');
    await expect(competitor).toHaveCount(1);
    await expect(competitor).toHaveAttribute('data-id', rival.id);
    await expect(competitor).toHaveAttribute('data-status', 'pending');
    await expect(page.getByTestId('claim-competitors')).toContainText('verifying one rejects the other pending ones');
    await page.mouse.move(0, 0);
    await settled(page);
    await page.screenshot({ path: shot('19-claims-competing.png') });
    await expectAccessible(page, 'console-claims-competing');

    // Verify by hand with the keyboard, then take it back with z: nothing was sent.
    await page.keyboard.press('m');
    await claims.manualNote.fill('Known maintainer');
    await claims.manualConfirm.click();
    await expect(claims.row(first.id)).toHaveCount(0);
    await expect(page.getByTestId('undo-decision')).toBeVisible();
    await expect(page.getByText('1 competing claim will be rejected')).toBeVisible();
    await page.keyboard.press('z');
    await expect(claims.row(first.id)).toHaveCount(1);
    await expect(claims.detail).toHaveAttribute('data-id', first.id);
    expect((await (await request.get(`/api/v1/claims/${first.id}`)).json()).status).toBe('pending');

    // Again, and let it go: the rival claim is rejected on the server and the list shows it so at once.
    await page.keyboard.press('m');
    await claims.manualNote.fill('Known maintainer');
    await claims.manualConfirm.click();
    await expect(claims.row(first.id)).toHaveCount(0);
    await expect(page.getByText(`Verified by hand: ${name}.`)).toBeVisible();
    await expect(claims.row(rival.id)).toContainText('rejected');
    await claims.select(rival.id);
    await expect(claims.status).toHaveText('rejected');
    await expect(page.getByTestId('claim-reason')).toContainText(`Another ownership claim for this agent was verified (${first.id})`);
    await expect(claims.verifyNow).toHaveCount(0);
    await expect(claims.reject).toHaveCount(0);
    await expect(competitor).toHaveAttribute('data-status', 'verified');
    await page.mouse.move(0, 0);
    await settled(page);
    await page.screenshot({ path: shot('20-claims-competitor-rejected.png') });
    await expectAccessible(page, 'console-claims-superseded');
    expect(await agentVerified(request, agentId)).toBe(true);
    expect(await auditActions(request, rival.id)).toEqual(['system claim.reject']);

    // In the verified tab the claim verified by hand after a failed check carries no red "check failed".
    await page.getByTestId('claims-tab-verified').click();
    await claims.expectSettled();
    await claims.select(first.id);
    await expect(claims.row(first.id)).toContainText('verified by hand');
    await expect(claims.row(first.id)).not.toContainText('check failed');
    await expect(page.getByTestId('claim-check-badge')).toHaveText('verified by hand');
    await expect(claims.detail.locator('.n-tag--error-type')).toHaveCount(0);
    await page.mouse.move(0, 0);
    await settled(page);
    await page.screenshot({ path: shot('21-claims-verified-by-hand.png') });
  });

  test('a DNS failure is reported as one, never as "token not found"', async ({ page, request }) => {
    const tag = unique();
    // .invalid never resolves (RFC 2606): both the well-known fetch and the TXT lookup fail in DNS.
    const submission = await publicPost(request, '/submit', {
      name: `Unresolvable Relay ${tag}`,
      tagline: 'Lives on a name nobody can resolve',
      source_url: `http://relay-${tag}.invalid/agent`,
    });
    const approved = await trpc<{ agent_id: string }>(request, 'submissions.approve', { id: submission.id }, 'mutation');
    const claim: NewClaim = await publicPost(request, '/claims', {
      agent_id: approved.agent_id,
      claimant_name: 'Dora Resolver',
      claimant_email: `dora+${tag}@example.com`,
    });

    const claims = new ClaimsPage(page);
    await claims.open(adminToken);
    await claims.select(claim.id);
    await claims.verifyNow.click();
    await expect(claims.verifyResult).toHaveAttribute('data-ok', 'false', { timeout: 20_000 });
    const toast = page.locator('.n-message').filter({ hasText: 'Verification failed' });
    await expect(toast).toContainText('DNS');
    await expect(toast).not.toContainText('token');
    await expect(claims.row(claim.id)).toContainText(/check failed · (DNS error|DNS timed out)/);
    const results = page.getByTestId('claim-proof-result');
    await expect(results.filter({ hasText: 'Well-known file' })).toContainText(/DNS error|DNS timed out/);
    await expect(results.filter({ hasText: 'DNS TXT record' })).toContainText(/no TXT record|DNS error|DNS timed out/);
    await expect(claims.lastCheck).not.toContainText('token not found');
    await page.mouse.move(0, 0);
    await settled(page);
    await page.screenshot({ path: shot('22-claims-dns-failure.png') });
  });

  test('an empty queue and a failed load say so', async ({ page }) => {
    const claims = new ClaimsPage(page);
    const unmock = await mockProcedures(page, {
      'claims.list': { data: { claims: [], page: 1, limit: 100, total: 0 } },
      'claims.counts': { data: { pending: 0, verified: 0, rejected: 0 } },
    });
    await claims.open(adminToken);
    await expect(page.getByTestId('claims-empty')).toContainText('No claim is waiting');
    await expect(claims.count('pending')).toHaveText('0');
    await page.screenshot({ path: shot('17-claims-empty.png') });
    await unmock();

    await mockProcedures(page, { 'claims.list': serverError });
    await page.getByTestId('claims-refresh').click();
    await expect(page.getByTestId('claims-error')).toContainText('The claims could not be loaded');
    await page.mouse.move(640, 600);
    await settled(page);
    await page.screenshot({ path: shot('18-claims-error.png') });
  });
});
