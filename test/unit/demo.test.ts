import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfig } from '../../src-api/config';
import { openDatabase, type Db } from '../../src-api/db/client';
import { DEMO_BASE_DATE, DEMO_SIZES, seedDemoDirectory, type DemoSummary } from '../../src-api/demo/seed-demo';
import { slugify } from '../../src-api/lib/ids';
import { sourceUrlKey } from '../../src-api/lib/urls';
import { AGENT_TYPES } from '../../src-api/modules/agents/agents.schemas';
import { TONES } from '../../src-api/modules/marketing/marketing.generator';
import { createServices, type Services } from '../../src-api/services';
import { json, makeTempDir, startTestServer } from '../helpers/test-server';

const SEEDED_TABLES = [
  'agents',
  'reviews',
  'claims',
  'submissions',
  'newsletter_subscribers',
  'marketing_posts',
  'ab_tests',
  'ab_test_variants',
];

interface Seeded {
  db: Db;
  services: Services;
  summary: DemoSummary;
}

/** A fresh database with its own random ids and the system clock: the demo must not depend on either. */
async function seedFresh(): Promise<Seeded> {
  const dataDir = makeTempDir('agentdir-demo-');
  const db = openDatabase(path.join(dataDir, 'agent-directory.sqlite'));
  const services = createServices({ db, config: createConfig({ dataDir }) });
  const summary = await seedDemoDirectory(services);
  return { db, services, summary };
}

function tableHash(db: Db, table: string): string {
  const rows = db.$client.prepare(`SELECT * FROM ${table} ORDER BY id`).all();
  return createHash('sha256').update(JSON.stringify(rows)).digest('hex');
}

function all<T>(db: Db, query: string, ...params: unknown[]): T[] {
  return db.$client.prepare(query).all(...params) as T[];
}

function one<T>(db: Db, query: string, ...params: unknown[]): T {
  return db.$client.prepare(query).get(...params) as T;
}

let first: Seeded;
let second: Seeded;

beforeAll(async () => {
  first = await seedFresh();
  second = await seedFresh();
});
afterAll(() => {
  first.db.$client.close();
  second.db.$client.close();
});

describe('seedDemoDirectory', () => {
  it('writes identical data into two databases', () => {
    expect(second.summary).toEqual(first.summary);
    for (const table of SEEDED_TABLES) {
      expect(tableHash(second.db, table), table).toBe(tableHash(first.db, table));
    }
  });

  it('records no events (demo seeding sends no webhooks)', () => {
    expect(one<{ n: number }>(first.db, 'SELECT count(*) AS n FROM events').n).toBe(0);
  });

  it('lists about 400 agents of every type, from about 60 authors, many with several agents', () => {
    const { db } = first;
    expect(first.summary.agents).toBe(DEMO_SIZES.agents);
    expect(one<{ n: number }>(db, 'SELECT count(*) AS n FROM agents WHERE listed = 1').n).toBe(DEMO_SIZES.agents);
    const types = all<{ type: string; n: number }>(db, 'SELECT type, count(*) AS n FROM agents WHERE listed = 1 GROUP BY type');
    expect(types.map((row) => row.type).sort()).toEqual([...AGENT_TYPES].sort());
    expect(Math.min(...types.map((row) => row.n))).toBeGreaterThanOrEqual(5);

    const authors = all<{ n: number }>(db, 'SELECT count(*) AS n FROM agents GROUP BY author');
    expect(authors.length).toBeGreaterThanOrEqual(50);
    expect(authors.filter((row) => row.n >= 3).length).toBeGreaterThanOrEqual(25);

    const categories = one<{ n: number }>(db, 'SELECT count(DISTINCT c.value) AS n FROM agents, json_each(agents.categories) AS c').n;
    expect(categories).toBeGreaterThanOrEqual(35);
    const capabilities = one<{ n: number }>(db, 'SELECT count(DISTINCT c.value) AS n FROM agents, json_each(agents.capabilities) AS c').n;
    expect(capabilities).toBeGreaterThanOrEqual(70);
    const verified = one<{ n: number }>(db, 'SELECT count(*) AS n FROM agents WHERE listed = 1 AND verified = 1').n;
    expect(verified).toBeGreaterThan(40);
    expect(verified).toBeLessThan(200);
  });

  it('builds agents the way the agents service would', () => {
    const rows = all<{
      id: string;
      name: string;
      tagline: string;
      description: string;
      source_url: string;
      source_url_key: string;
      version: number;
      change_seq: number;
      created_at: string;
      updated_at: string;
      capabilities: string;
      trust_score: number;
    }>(first.db, 'SELECT * FROM agents ORDER BY change_seq');
    const base = Date.parse(DEMO_BASE_DATE);
    const eighteenMonths = 550 * 86_400_000;
    rows.forEach((row, index) => {
      expect(row.id).toMatch(new RegExp(`^${slugify(row.name)}-[a-z0-9]{6}$`));
      expect(row.source_url).toMatch(/^https:\/\/(github|gitlab)\.com\/[a-z0-9-]+\/[a-z0-9-]+$/);
      expect(row.source_url_key).toBe(sourceUrlKey(row.source_url));
      expect(row.description.length).toBeGreaterThanOrEqual(200);
      expect(row.description.length).toBeLessThanOrEqual(500);
      expect(row.tagline.length).toBeGreaterThan(10);
      expect(JSON.parse(row.capabilities).length).toBeGreaterThanOrEqual(3);
      expect(row.version).toBe(1);
      expect(row.change_seq).toBe(index + 1);
      expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(row.created_at)).toBeLessThan(base);
      expect(Date.parse(row.created_at)).toBeGreaterThan(base - eighteenMonths);
      expect(row.trust_score).toBeGreaterThan(0);
    });
    expect(new Set(rows.map((row) => row.source_url_key)).size).toBe(rows.length);
    expect(new Set(rows.map((row) => row.name.toLowerCase())).size).toBe(rows.length);
    expect(new Set(rows.map((row) => row.tagline)).size).toBeGreaterThan(rows.length / 4);
  });

  it('adds about 1,500 reviews, skewed positive, with aggregates that match the visible ones', () => {
    const { db } = first;
    const ratings = all<{ rating: number; n: number }>(db, 'SELECT rating, count(*) AS n FROM reviews GROUP BY rating ORDER BY rating');
    const count = (rating: number) => ratings.find((row) => row.rating === rating)?.n ?? 0;
    expect(ratings.reduce((sum, row) => sum + row.n, 0)).toBe(DEMO_SIZES.reviews);
    expect(ratings.map((row) => row.rating)).toEqual([1, 2, 3, 4, 5]);
    expect(count(5) + count(4)).toBeGreaterThan(2 * (count(1) + count(2) + count(3)));
    const withText = one<{ comments: number; names: number }>(
      db,
      'SELECT count(comment) AS comments, count(reviewer_name) AS names FROM reviews',
    );
    expect(withText.comments).toBeGreaterThan(DEMO_SIZES.reviews * 0.6);
    expect(withText.names).toBeGreaterThan(DEMO_SIZES.reviews * 0.6);

    const mismatches = one<{ n: number }>(
      db,
      `SELECT count(*) AS n FROM agents a
       LEFT JOIN (SELECT agent_id, count(*) AS c, sum(rating) AS s FROM reviews WHERE hidden = 0 GROUP BY agent_id) r ON r.agent_id = a.id
       WHERE a.rating_count != coalesce(r.c, 0) OR a.rating_sum != coalesce(r.s, 0)`,
    ).n;
    expect(mismatches).toBe(0);
    const early = one<{ n: number }>(
      db,
      'SELECT count(*) AS n FROM reviews r JOIN agents a ON a.id = r.agent_id WHERE r.created_at < a.created_at',
    ).n;
    expect(early).toBe(0);
  });

  it('fills the moderation queues, claims and the newsletter', () => {
    const { db } = first;
    const submissionCounts = Object.fromEntries(
      all<{ status: string; n: number }>(db, 'SELECT status, count(*) AS n FROM submissions GROUP BY status').map((row) => [
        row.status,
        row.n,
      ]),
    );
    expect(submissionCounts.pending).toBe(DEMO_SIZES.pendingSubmissions);
    expect(submissionCounts.approved).toBeGreaterThan(0);
    expect(submissionCounts.rejected).toBeGreaterThan(0);
    // Approved submissions point at their agent; pending ones never collide with a listed agent's source.
    expect(
      one<{ n: number }>(
        db,
        "SELECT count(*) AS n FROM submissions s JOIN agents a ON a.id = s.agent_id AND a.source_url_key = s.source_url_key WHERE s.status = 'approved'",
      ).n,
    ).toBe(submissionCounts.approved);
    expect(
      one<{ n: number }>(
        db,
        "SELECT count(*) AS n FROM submissions s JOIN agents a ON a.source_url_key = s.source_url_key WHERE s.status = 'pending'",
      ).n,
    ).toBe(0);

    const claimCounts = Object.fromEntries(
      all<{ status: string; n: number }>(db, 'SELECT status, count(*) AS n FROM claims GROUP BY status').map((row) => [row.status, row.n]),
    );
    expect(claimCounts.pending).toBe(DEMO_SIZES.pendingClaims);
    expect(claimCounts.verified).toBe(one<{ n: number }>(db, 'SELECT count(*) AS n FROM agents WHERE verified = 1').n);

    expect(one<{ n: number }>(db, 'SELECT count(DISTINCT email_key) AS n FROM newsletter_subscribers').n).toBe(DEMO_SIZES.subscribers);
  });

  it('generates marketing history with the live generator: tones, publishing over 60 days, A/B tests', async () => {
    const { db, services } = first;
    const tones = all<{ tone: string }>(db, 'SELECT DISTINCT tone FROM marketing_posts').map((row) => row.tone);
    expect(tones.sort()).toEqual([...TONES].sort());
    const eventTypes = all<{ t: string }>(db, 'SELECT DISTINCT source_event_type AS t FROM marketing_posts ORDER BY t').map((row) => row.t);
    expect(eventTypes).toEqual(['agent.registered', 'agent.verified', 'review.created']);
    expect(one<{ n: number }>(db, 'SELECT count(*) AS n FROM marketing_posts WHERE source_event_id IS NOT NULL').n).toBe(0);
    expect(one<{ n: number }>(db, 'SELECT count(*) AS n FROM marketing_posts WHERE agent_id NOT IN (SELECT id FROM agents)').n).toBe(0);

    const base = Date.parse(DEMO_BASE_DATE);
    const published = all<{ published_at: string }>(db, 'SELECT published_at FROM marketing_posts WHERE published_at IS NOT NULL');
    const total = one<{ n: number }>(db, 'SELECT count(*) AS n FROM marketing_posts').n;
    expect(published.length).toBeGreaterThan(total * 0.3);
    expect(published.length).toBeLessThan(total * 0.8);
    for (const { published_at } of published) {
      expect(Date.parse(published_at)).toBeLessThanOrEqual(base);
      expect(Date.parse(published_at)).toBeGreaterThan(base - 63 * 86_400_000);
    }
    const publishDays = one<{ n: number }>(db, 'SELECT count(DISTINCT substr(published_at, 1, 10)) AS n FROM marketing_posts').n;
    expect(publishDays).toBeGreaterThan(40);

    const tests = (await services.marketing.listAbTests({ page: 1, limit: 100 })).items;
    expect(tests.length).toBeGreaterThanOrEqual(20);
    expect(tests.some((test) => test.status === 'completed')).toBe(true);
    expect(tests.some((test) => test.status === 'running')).toBe(true);
    expect(tests.filter((test) => test.winner !== undefined).length).toBeGreaterThanOrEqual(3);
    expect(tests.filter((test) => test.p_value !== undefined && test.p_value >= 0.05).length).toBeGreaterThanOrEqual(3);
    for (const test of tests) {
      for (const variant of test.variants) expect(variant.conversions).toBeLessThanOrEqual(variant.impressions);
    }
  });
});

describe('serve on an empty database', () => {
  it('seeds the demo directory and serves it', async () => {
    const server = await startTestServer({ demoData: true });
    try {
      const health = await json(await server.api('/health'));
      expect(health.agents_indexed).toBe(DEMO_SIZES.agents);
      const stats = await json(await server.api('/stats'));
      expect(stats.total_agents).toBe(DEMO_SIZES.agents);
      expect(Object.values(stats.by_type).every((n) => (n as number) > 0)).toBe(true);
      expect(stats.reviews.count).toBeGreaterThan(1400);
      const posts = await json(await server.api('/marketing/posts?status=published&limit=5'));
      expect(posts.total).toBeGreaterThan(100);
    } finally {
      await server.close();
    }
  });
});
