import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import { expectAccessible } from './pages/accessibility';
import { AgentsPage } from './pages/agents-page';
import { screenshotScreen, signInAsModerator, trpc, uniqueSuffix } from './pages/directory-fixtures';
import { SubmissionsPage } from './pages/submissions-page';

/**
 * An agent submitted by A2A Agent Card, as a moderator sees it: the card's skills in the
 * submission queue before approving, then the agent's Agent Card tab (where the card lives, when
 * it was fetched, its skills) and "Fetch the card now" picking up a changed card.
 * The card host is a real HTTP server in this process; the e2e server allows private URLs.
 */

const suffix = uniqueSuffix();
let card: Record<string, unknown>;
let etag = '"1"';
let cardHost: http.Server;
let cardUrl: string;

test.beforeAll(async () => {
  cardHost = http.createServer((request, response) => {
    if (request.headers['if-none-match'] === etag) return response.writeHead(304, { etag }).end();
    response.writeHead(200, { 'content-type': 'application/json', etag }).end(JSON.stringify(card));
  });
  await new Promise<void>((resolve) => cardHost.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(cardHost.address() as AddressInfo).port}`;
  cardUrl = `${origin}/.well-known/agent-card.json`;
  card = {
    protocolVersion: '0.3.0',
    name: `Card Courier ${suffix}`,
    description: 'Delivers parcels between agents',
    url: `${origin}/a2a`,
    version: '1.0.0',
    provider: { organization: 'Courier Co', url: 'https://courier.example' },
    capabilities: {},
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      { id: 'route-parcel', name: 'Route a parcel', description: 'Finds the fastest route for a parcel', tags: ['logistics', 'routing'] },
      { id: 'track-parcel', name: 'Track a parcel', description: 'Reports where a parcel is', tags: ['tracking'] },
    ],
  };
});
test.afterAll(() => new Promise<void>((resolve) => cardHost.close(() => resolve())));

test('a card submission shows its skills; the agent shows its card and fetches it again on demand', async ({ page, request }) => {
  const submitted = await request.post('/api/v1/submit', { data: { agent_card_url: cardUrl } });
  expect(submitted.status(), await submitted.text()).toBe(201);
  const submission = (await submitted.json()) as { id: string };

  await signInAsModerator(page);
  const queue = new SubmissionsPage(page);
  await page.goto('/console/submissions');
  await queue.expectSettled();
  await queue.searchFor(`Card Courier ${suffix}`);
  await queue.select(submission.id);
  await expect(queue.detail.getByTestId('detail-card-link')).toHaveText(cardUrl);
  await expect(queue.detail.getByTestId('card-skill')).toHaveCount(2);
  await expect(queue.detail.getByTestId('card-skill').first()).toContainText('Route a parcel');
  await screenshotScreen(page, '36-submission-agent-card');
  await expectAccessible(page, 'console-submission-agent-card');

  const approved = await trpc<{ agent_id: string }>(request, 'submissions.approve', { id: submission.id }, 'mutation');

  // The card changes after approval: a new skill.
  card = {
    ...card,
    skills: [...(card.skills as unknown[]), { id: 'insure-parcel', name: 'Insure a parcel', description: 'Adds insurance', tags: [] }],
  };
  etag = '"2"';

  const agents = new AgentsPage(page);
  await page.goto(`/console/agents?agent=${approved.agent_id}`);
  await agents.expectDrawerFor(approved.agent_id);
  await agents.tab('Agent Card (2 skills)').click();
  const tab = page.getByTestId('agent-card-tab');
  await expect(tab.getByTestId('agent-card-url')).toHaveText(cardUrl);
  await expect(tab.getByTestId('card-skill')).toHaveCount(2);

  await tab.getByTestId('agent-card-refetch').click();
  await expect(agents.message('The card changed: the profile and skills were updated')).toBeVisible();
  await expect(tab.getByTestId('card-skill')).toHaveCount(3);
  await expect(agents.tab('Agent Card (3 skills)')).toBeVisible();
  await screenshotScreen(page, '37-agent-card-tab');
  await expectAccessible(page, 'console-agent-card-tab');

  // Unchanged since: the next fetch is a 304 and says so.
  await tab.getByTestId('agent-card-refetch').click();
  await expect(agents.message('The card has not changed since the last fetch (304)')).toBeVisible();

  const profile = (await (await request.get(`/api/v1/agents/${approved.agent_id}`)).json()) as { skills: { id: string }[] };
  expect(profile.skills.map((skill) => skill.id)).toEqual(['route-parcel', 'track-parcel', 'insure-parcel']);
});
