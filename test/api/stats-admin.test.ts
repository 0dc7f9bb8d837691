import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { submissionInputSchema } from '../../src-api/modules/submissions/submissions.schemas';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { trpcClient } from '../helpers/trpc';

/** stats.* over real HTTP with the admin token: the console's overview. */
const ADMIN_TOKEN = 'test-admin-token-stats-0123456789';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
  );
});
afterAll(() => server.close());

const { query } = trpcClient(() => server.origin, ADMIN_TOKEN);

describe('stats.overview', () => {
  it('counts pending queues, webhook endpoints in trouble and 30 days of activity', async () => {
    const empty = await query('stats.overview');
    expect(empty.status).toBe(200);
    expect(empty.data).toMatchObject({ pending_submissions: 0, pending_claims: 0, webhooks: { failing: 0, disabled: 0, total: 0 } });
    expect(empty.data.activity).toHaveLength(30);

    const { services } = server;
    const agent = await services.agents.edits.create(agentInput({ name: 'Overview Agent' }), { emitEvents: false });
    await services.reviews.create(agent.id, { rating: 4, comment: null, reviewer_name: null });
    await services.submissions.submit(
      submissionInputSchema.parse({ name: 'Pending One', tagline: 'Waits', source_url: 'https://example.com/pending-one' }),
    );
    await services.claims.create({ agent_id: agent.id, claimant_name: 'Owner', claimant_email: 'owner@example.com' });
    const healthy = await services.webhooks.add({ url: 'https://example.com/healthy' }, { actor: 'test' });
    const failing = await services.webhooks.add({ url: 'https://example.com/failing' }, { actor: 'test' });
    const disabled = await services.webhooks.add({ url: 'https://example.com/disabled' }, { actor: 'test' });
    await services.store.run(
      services.store.db
        .update(services.store.t.webhookEndpoints)
        .set({ consecutiveFailures: 3 })
        .where(eq(services.store.t.webhookEndpoints.id, failing.id)),
    );
    await services.webhooks.setActive(disabled.id, false, { actor: 'test', reason: '410 Gone' });
    expect(healthy.active).toBe(true);

    const overview = (await query('stats.overview')).data;
    expect(overview).toMatchObject({ pending_submissions: 1, pending_claims: 1, webhooks: { failing: 1, disabled: 1, total: 3 } });
    const today = overview.activity.at(-1);
    expect(today).toMatchObject({ date: new Date().toISOString().slice(0, 10), submissions: 1, reviews: 1, agents: 1 });
  });

  it('gives the directory figures of the public /stats', async () => {
    const directory = (await query('stats.directory')).data;
    expect(directory).toEqual(await json(await server.api('/stats')));
    expect(directory.total_agents).toBeGreaterThan(0);
  });

  it('needs the admin token', async () => {
    expect((await fetch(`${server.origin}/trpc/stats.overview`)).status).toBe(401);
  });
});
