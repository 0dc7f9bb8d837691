import { sql } from 'drizzle-orm';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { trpcClient } from '../helpers/trpc';

/** POST /submit with {"agent_card_url"} (contract §9), against a local card host. */
interface CardHost {
  origin: string;
  cards: Map<string, { body: string; etag: string }>;
  requests: { path: string; ifNoneMatch?: string }[];
  close(): Promise<void>;
}

async function startCardHost(): Promise<CardHost> {
  const cards = new Map<string, { body: string; etag: string }>();
  const requests: CardHost['requests'] = [];
  const server = http.createServer((request, response) => {
    const path = request.url ?? '/';
    const ifNoneMatch = request.headers['if-none-match'];
    requests.push({ path, ifNoneMatch });
    const card = cards.get(path);
    if (!card) return response.writeHead(404).end('not found');
    if (ifNoneMatch === card.etag) return response.writeHead(304, { etag: card.etag }).end();
    response.writeHead(200, { 'content-type': 'application/json', etag: card.etag }).end(card.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cards,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const goodCard = (origin: string, overrides: Record<string, unknown> = {}) => ({
  protocolVersion: '0.3.0',
  name: 'Invoice Clerk',
  description: 'Reads invoices and books them\nSupports PDF and e-invoice formats.',
  url: `${origin}/a2a`,
  version: '1.0.0',
  provider: { organization: 'Ledger Labs', url: 'https://ledger.example' },
  capabilities: { streaming: true },
  defaultInputModes: ['application/pdf'],
  defaultOutputModes: ['application/json'],
  skills: [
    { id: 'book-invoice', name: 'Book an invoice', description: 'Books one invoice', tags: ['accounting', 'invoices'] },
    { id: 'extract-totals', name: 'Extract totals', description: 'Reads the totals', tags: ['ocr'] },
  ],
  ...overrides,
});

let server: TestServer;
let host: CardHost;

const ADMIN_TOKEN = 'test-admin-token-agent-card-0123456789';

beforeAll(async () => {
  server = await startTestServer(
    { allowPrivateUrls: true, adminToken: ADMIN_TOKEN },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
  );
  host = await startCardHost();
});
afterAll(async () => {
  await host.close();
  await server.close();
});

describe('POST /submit with agent_card_url', () => {
  it('maps a good card to a submission, and the approved agent carries agent_card_url and skills', async () => {
    host.cards.set('/good/.well-known/agent-card.json', { body: JSON.stringify(goodCard(host.origin)), etag: '"v1"' });
    const cardUrl = `${host.origin}/good/.well-known/agent-card.json`;
    const response = await server.post('/submit', { agent_card_url: cardUrl, contact_email: 'ops@ledger.example' });
    expect(response.status).toBe(201);
    const submission = await json(response);
    expect(submission).toMatchObject({
      status: 'pending',
      name: 'Invoice Clerk',
      tagline: 'Reads invoices and books them',
      author: 'Ledger Labs',
      source_url: `${host.origin}/a2a`,
      agent_card_url: cardUrl,
      capabilities: ['book-invoice', 'accounting', 'invoices', 'extract-totals', 'ocr'],
    });

    const approved = await server.services.submissions.approve(submission.id, { actor: 'test' });
    const agent = await json(await server.api(`/agents/${approved.agent_id}`));
    expect(agent.agent_card_url).toBe(cardUrl);
    expect(agent.skills).toEqual([
      { id: 'book-invoice', name: 'Book an invoice', description: 'Books one invoice', tags: ['accounting', 'invoices'] },
      { id: 'extract-totals', name: 'Extract totals', description: 'Reads the totals', tags: ['ocr'] },
    ]);
    // Skills are searchable (as capabilities).
    await server.services.search.refresh();
    const found = await json(await server.api('/agents/search?q=extract-totals'));
    expect(found.agents.map((hit: { id: string }) => hit.id)).toContain(approved.agent_id);

    // Weekly re-fetch: a week later the card answers 304 to its ETag: nothing changes.
    const age = () => server.services.store.run(sql`UPDATE agents SET agent_card_fetched_at = '2000-01-01T00:00:00.000Z'`);
    await age();
    const version = (await server.services.agents.getRow(approved.agent_id!)).version;
    expect(await server.services.agentCards.refetchDue()).toEqual({ checked: 1, updated: 0, notModified: 1, failed: 0 });
    expect(host.requests.at(-1)).toMatchObject({ ifNoneMatch: '"v1"' });
    expect((await server.services.agents.getRow(approved.agent_id!)).version).toBe(version);
    expect(await server.services.agentCards.refetchDue()).toMatchObject({ checked: 0 });

    // The card changes: the profile and skills follow, and that is an agent.updated.
    const changed = goodCard(host.origin, {
      description: 'Reads, checks and books invoices',
      skills: [{ id: 'book-invoice', name: 'Book an invoice', description: 'Books one invoice', tags: ['accounting'] }],
    });
    host.cards.set('/good/.well-known/agent-card.json', { body: JSON.stringify(changed), etag: '"v2"' });
    await age();
    expect(await server.services.agentCards.refetchDue()).toEqual({ checked: 1, updated: 1, notModified: 0, failed: 0 });
    const after = await json(await server.api(`/agents/${approved.agent_id}`));
    expect(after.tagline).toBe('Reads, checks and books invoices');
    expect(after.skills.map((skill: { id: string }) => skill.id)).toEqual(['book-invoice']);
    expect(after.capabilities).toEqual(['book-invoice', 'accounting']);
    const event = (await server.services.events.listRecent(5)).find((each) => each.type === 'agent.updated');
    expect(event?.data).toMatchObject({ agent_id: approved.agent_id });
    expect((event?.data as { changed_fields: string[] }).changed_fields).toEqual(expect.arrayContaining(['tagline', 'skills']));
  });

  it('refuses an invalid card with 422 and the failing fields, and writes nothing', async () => {
    const bad = goodCard(host.origin, { url: 'not a url', skills: [{ id: 'x', name: 'X', tags: 'nope' }] });
    delete (bad as Record<string, unknown>).version;
    host.cards.set('/bad.json', { body: JSON.stringify(bad), etag: '"b"' });
    const before = await server.services.submissions.countPending();
    const response = await server.post('/submit', { agent_card_url: `${host.origin}/bad.json` });
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    const problem = await json(response);
    expect(problem.code).toBe('invalid_agent_card');
    const pointers = problem.errors.map((error: { pointer: string }) => error.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/url', '/version', '/skills/0/description', '/skills/0/tags']));
    expect(await server.services.submissions.countPending()).toBe(before);
  });

  it('refuses a card that is missing or not JSON (422), and agent fields beside agent_card_url (400)', async () => {
    const missing = await server.post('/submit', { agent_card_url: `${host.origin}/nowhere.json` });
    expect(missing.status).toBe(422);
    expect((await json(missing)).errors[0].pointer).toBe('/agent_card_url');

    host.cards.set('/text.json', { body: 'hello', etag: '"t"' });
    const text = await server.post('/submit', { agent_card_url: `${host.origin}/text.json` });
    expect(text.status).toBe(422);

    const mixed = await server.post('/submit', { agent_card_url: `${host.origin}/bad.json`, name: 'Mine' });
    expect(mixed.status).toBe(400);
    expect((await json(mixed)).errors[0].pointer).toBe('/name');

    const neither = await server.post('/submit', { tagline: 'no name, no card' });
    expect(neither.status).toBe(400);
  });
});

/** The console's tRPC API over real HTTP, as the web build calls it with the admin token. */
const consoleApi = trpcClient(() => server.origin, ADMIN_TOKEN);

describe('the card in the console', () => {
  it('shows a card submission its skills before approval, and the agent its card and when it was fetched', async () => {
    host.cards.set('/console/.well-known/agent-card.json', {
      body: JSON.stringify(goodCard(host.origin, { name: 'Console Clerk', url: `${host.origin}/console-a2a` })),
      etag: '"c1"',
    });
    const cardUrl = `${host.origin}/console/.well-known/agent-card.json`;
    const submission = await json(await server.post('/submit', { agent_card_url: cardUrl }));
    // The public view keeps to the contract's fields; the moderator's view adds the skills.
    expect(submission.skills).toBeUndefined();
    const queued = await consoleApi.query('submissions.get', { id: submission.id });
    expect(queued.data.skills.map((skill: { id: string }) => skill.id)).toEqual(['book-invoice', 'extract-totals']);

    const approved = await server.services.submissions.approve(submission.id, { actor: 'test' });
    const agent = await consoleApi.query('agents.get', { id: approved.agent_id });
    expect(agent.data.agent_card).toEqual({ url: cardUrl, etag: '"c1"', fetched_at: expect.any(String) });
    // The public profile does not carry the bookkeeping.
    expect((await json(await server.api(`/agents/${approved.agent_id}`))).agent_card).toBeUndefined();
  });

  it('agents.refetchCard fetches now with the ETag: 304, a changed card (audited), a failing one (profile kept)', async () => {
    const path = '/refetch/.well-known/agent-card.json';
    host.cards.set(path, {
      body: JSON.stringify(goodCard(host.origin, { name: 'Refetch Clerk', url: `${host.origin}/refetch-a2a` })),
      etag: '"r1"',
    });
    const submission = await json(await server.post('/submit', { agent_card_url: `${host.origin}${path}` }));
    const { agent_id: id } = await server.services.submissions.approve(submission.id, { actor: 'test' });

    const notModified = await consoleApi.mutation('agents.refetchCard', { id });
    expect(notModified.status).toBe(200);
    expect(notModified.data.outcome).toBe('not_modified');
    expect(host.requests.at(-1)).toMatchObject({ path, ifNoneMatch: '"r1"' });

    const renamed = goodCard(host.origin, {
      name: 'Refetch Clerk',
      url: `${host.origin}/refetch-a2a`,
      description: 'Books invoices, now in bulk',
      skills: [{ id: 'bulk-book', name: 'Book many invoices', description: 'Books a batch', tags: ['accounting'] }],
    });
    host.cards.set(path, { body: JSON.stringify(renamed), etag: '"r2"' });
    const updated = await consoleApi.mutation('agents.refetchCard', { id });
    expect(updated.data).toMatchObject({
      outcome: 'updated',
      agent: { tagline: 'Books invoices, now in bulk', agent_card: { etag: '"r2"' } },
    });
    expect(updated.data.agent.skills.map((skill: { id: string }) => skill.id)).toEqual(['bulk-book']);
    const audit = await consoleApi.query('audit.list', { entityId: id });
    expect(audit.data.entries.map((entry: { action: string; actor: string }) => [entry.action, entry.actor])).toContainEqual([
      'agent.update',
      'admin-token',
    ]);

    host.cards.delete(path);
    const failed = await consoleApi.mutation('agents.refetchCard', { id });
    expect(failed.data).toMatchObject({ outcome: 'failed', agent: { tagline: 'Books invoices, now in bulk' } });
    expect(failed.data.error).toMatch(/404/);
  });

  it('refuses an agent without a card (409) and an unknown agent (404)', async () => {
    const plain = await server.services.agents.edits.create(agentInput({ name: 'No Card Agent' }), { emitEvents: false });
    const noCard = await consoleApi.mutation('agents.refetchCard', { id: plain.id });
    expect(noCard.status).toBe(409);
    expect(noCard.error.message).toMatch(/not submitted by Agent Card/);
    expect((await consoleApi.mutation('agents.refetchCard', { id: 'agt_unknown' })).status).toBe(404);
  });
});
