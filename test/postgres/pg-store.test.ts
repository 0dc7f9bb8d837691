import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src-api/db/client';
import { openPostgres, type PgDb } from '../../src-api/db/client-pg';
import * as sqliteSchema from '../../src-api/db/schema';
import * as pgSchema from '../../src-api/db/schema-pg';
import type { AgentRow } from '../../src-api/modules/agents/agents.table';
import { startPostgres, type TestPostgres } from '../helpers/postgres-server';
import { makeTempDir } from '../helpers/test-server';

/**
 * The PostgreSQL twin schema through drizzle's node-postgres driver
 * (openPostgres: migrated, then pooled): a row written through either store
 * reads back as the same object, JSON, booleans, 64-bit counters and reals included.
 */
let postgres: TestPostgres;
let pg: PgDb;
const dirs: string[] = [];
/** A new SQLite file in a temp dir removed after the tests. */
function sqliteFile(): string {
  const dir = makeTempDir('agentdir-pg-store-');
  dirs.push(dir);
  return path.join(dir, 'agent-directory.sqlite');
}
beforeAll(async () => {
  postgres = await startPostgres();
  postgres.query('CREATE DATABASE store');
  pg = await openPostgres(postgres.urlOf('store'), { max: 2 });
}, 180_000);
afterAll(async () => {
  await pg?.$client.end();
  postgres?.stop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const agent: AgentRow = {
  id: 'agt_twin',
  name: 'Twin “agent” 🚀',
  tagline: "It's the same on both stores",
  description: 'line one\nline two',
  author: 'Ada',
  capabilities: ['search', 'ünïcødé'],
  categories: [],
  type: 'coding',
  sourceUrl: 'https://example.org/twin',
  sourceUrlKey: 'example.org/twin',
  verified: true,
  listed: false,
  status: 'deprecated',
  statusMessage: null,
  ownerAccountId: null,
  ownerName: 'Ada',
  agentCardUrl: 'https://example.org/.well-known/agent-card.json',
  skills: [{ id: 's1', name: 'Search', description: 'finds things', tags: ['a', 'b'] }],
  agentCardEtag: null,
  agentCardFetchedAt: '2026-11-25T18:00:00.000Z',
  trustScore: 0.1 + 0.2,
  ratingCount: 3,
  ratingSum: 14,
  version: 7,
  changeSeq: 2 ** 52 + 1,
  createdAt: '2026-11-01T12:00:00.000Z',
  updatedAt: '2026-11-25T18:00:00.123Z',
};

describe('the PostgreSQL store through drizzle', () => {
  it('an agent row written and read through each store is the same object', async () => {
    await pg.insert(pgSchema.agents).values(agent);
    const [fromPg] = await pg.select().from(pgSchema.agents).where(eq(pgSchema.agents.id, agent.id));
    expect(fromPg).toEqual(agent);

    const sqlite = openDatabase(sqliteFile());
    try {
      sqlite.insert(sqliteSchema.agents).values(agent).run();
      const fromSqlite = sqlite.select().from(sqliteSchema.agents).where(eq(sqliteSchema.agents.id, agent.id)).get();
      expect(fromSqlite).toEqual(fromPg);
    } finally {
      sqlite.$client.close();
    }
  });

  it('SQL defaults are the same: a minimal row gets the defaults SQLite gives it', async () => {
    const minimal = {
      id: 'agt_min',
      name: 'M',
      tagline: 'T',
      type: 'other',
      sourceUrl: 'https://m.example',
      sourceUrlKey: 'm.example',
      createdAt: 'c',
      updatedAt: 'u',
    };
    const [fromPg] = await pg.insert(pgSchema.agents).values(minimal).returning();
    const sqlite = openDatabase(sqliteFile());
    try {
      const fromSqlite = sqlite.insert(sqliteSchema.agents).values(minimal).returning().get();
      expect(fromPg).toEqual(fromSqlite);
      expect(fromPg).toMatchObject({ listed: true, verified: false, capabilities: [], status: 'active', version: 1, trustScore: 0 });
    } finally {
      sqlite.$client.close();
    }
  });
});
