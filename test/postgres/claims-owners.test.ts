import http from 'node:http';
import type net from 'node:net';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src-api/config';
import type { Store } from '../../src-api/db/store';
import { ConflictError, NotFoundError, QuotaExceededError, StaleVersionError, VerificationFailedError } from '../../src-api/errors';
import { createDnsResolver } from '../../src-api/lib/dns-resolver';
import { createIdGenerator } from '../../src-api/lib/ids';
import { createSafeFetch } from '../../src-api/lib/safe-fetch';
import { createClaimsService, type ClaimsService } from '../../src-api/modules/claims/claims.service';
import { createMailService } from '../../src-api/modules/mail/mail.service';
import { createEditRequestsService, type EditRequestsService } from '../../src-api/modules/owners/edit-requests.service';
import { createOwnersService, type OwnersService } from '../../src-api/modules/owners/owners.service';
import { agentRow, bothStores } from '../helpers/both-stores';
import { agentParts } from '../helpers/agent-parts';

/**
 * Claims (proofs, decisions, re-checks), owners' edits and replies, and the queue of their edit
 * requests on the data-access seam, on SQLite and PostgreSQL 15. The decisions that race on
 * PostgreSQL (two claims of one agent verified at once, an owner's two renames at once, an edit
 * request approved and rejected at once) are run side by side; on SQLite they queue on the
 * one write lock. test/api covers the HTTP and tRPC faces on SQLite.
 */
const stores = bothStores();
const ownerAccount = { id: 'acc_owner', name: 'Ada Owner', email: 'ada@owner.test' };

// A real web site playing the agents' owners: /.well-known/agent-directory-claim.txt serves `proofs`.
let proofs = '';
const site = http.createServer((request, response) => {
  if (request.url === '/.well-known/agent-directory-claim.txt') response.writeHead(200, { 'content-type': 'text/plain' }).end(proofs);
  else response.writeHead(404).end('not found');
});
let siteOrigin = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  await stores.cleanup();
  await new Promise((resolve) => site.close(resolve));
});

describe.each(stores.dialects)('claims and owners on $dialect', ({ open }) => {
  let store: Store;
  let claims: ClaimsService;
  let owners: OwnersService;
  let editRequests: EditRequestsService;
  let now = new Date('2025-05-01T10:00:00.000Z');
  const clock = { now: () => now };

  const addAgent = (id: string, overrides: Parameters<typeof agentRow>[0] = {}) =>
    store.run(
      store.db.insert(store.t.agents).values(
        agentRow({
          id,
          name: `Agent ${id}`,
          sourceUrl: `${siteOrigin}/${id}`,
          sourceUrlKey: `${siteOrigin}/${id}`,
          verified: false,
          ownerAccountId: null,
          ownerName: null,
          changeSeq: 0,
          version: 1,
          ...overrides,
        }),
      ),
    );
  const claimRows = (agentId: string) =>
    store.rows(store.db.select().from(store.t.claims).where(eq(store.t.claims.agentId, agentId)).orderBy(asc(store.t.claims.id)));
  const eventsOf = async (agentId: string) =>
    (await store.rows(store.db.select().from(store.t.events).orderBy(asc(store.t.events.id))))
      .filter((event) => (event.data as { agent_id?: string }).agent_id === agentId)
      .map((event) => event.type)
      .sort();

  beforeAll(async () => {
    store = await open();
    const ids = createIdGenerator();
    const { events, audit, agents } = agentParts(store, { clock, ids });
    const mail = createMailService({ store, clock, ids, config: { mail: defaultConfig.mail } });
    const accountOf = async (accountId: string) => (accountId === ownerAccount.id ? ownerAccount : undefined);
    claims = createClaimsService({
      store,
      clock,
      ids,
      agents,
      audit,
      events,
      fetch: createSafeFetch({ resolver: createDnsResolver({ servers: [], timeoutMs: 1_000 }), allowPrivate: true }),
      verifyTimeoutMs: 2_000,
      resolver: createDnsResolver({ servers: ['127.0.0.1:9'], timeoutMs: 200 }),
      forgeRawBases: {},
      recheckIntervalMs: 7 * 24 * 3600_000,
      recheckStrikes: 2,
      quotas: true,
      accountOf,
      queueMail: (message) => mail.queueInTransaction(message),
    });
    owners = createOwnersService({ store, clock, ids, agents, audit });
    editRequests = createEditRequestsService({ store, clock, agents, audit, accountOf });
  }, 180_000);

  it('makes claims: an unknown or verified agent, a second pending claim of one account and a sixth of one client are refused', async () => {
    await addAgent('agt_c1');
    await addAgent('agt_done', { verified: true });
    const claim = await claims.create(
      { agent_id: 'agt_c1', claimant_name: 'Ada', claimant_email: 'ada@owner.test' },
      { accountId: ownerAccount.id, clientKey: 'client-a' },
    );
    expect(claim).toMatchObject({ status: 'pending', agent_id: 'agt_c1' });
    expect(claim.verification.methods.map((method) => method.method)).toContain('well-known');
    await expect(claims.create({ agent_id: 'agt_missing', claimant_name: 'A', claimant_email: 'a@b.test' })).rejects.toThrow(NotFoundError);
    await expect(claims.create({ agent_id: 'agt_done', claimant_name: 'A', claimant_email: 'a@b.test' })).rejects.toThrow(ConflictError);
    await expect(
      claims.create({ agent_id: 'agt_c1', claimant_name: 'Ada', claimant_email: 'ada@owner.test' }, { accountId: ownerAccount.id }),
    ).rejects.toThrow(ConflictError);
    for (let i = 2; i <= 5; i++)
      await claims.create({ agent_id: 'agt_c1', claimant_name: `C${i}`, claimant_email: 'c@b.test' }, { clientKey: 'client-a' });
    await expect(
      claims.create({ agent_id: 'agt_c1', claimant_name: 'C6', claimant_email: 'c@b.test' }, { clientKey: 'client-a' }),
    ).rejects.toThrow(QuotaExceededError);
    expect(await claims.countPending()).toBe(5);
    expect(await claims.countByStatus()).toEqual({ pending: 5, verified: 0, rejected: 0 });
    const page = await claims.list({ page: 1, limit: 2, agent_id: 'agt_c1', group_by_agent: true });
    expect(page).toMatchObject({ total: 5, page: 1, limit: 2 });
    expect(page.items[0]).toMatchObject({ agent_name: 'Agent agt_c1', competing_claims: 4 });
  });

  it('verifies by a proof on the real site (a failed check kept first), superseding the other pending claims of the agent', async () => {
    const rows = await claimRows('agt_c1');
    const first = rows.find((row) => row.accountId === ownerAccount.id);
    const others = rows.filter((row) => row !== first);
    proofs = 'nothing here';
    await expect(claims.verify(first!.id)).rejects.toThrow(VerificationFailedError);
    expect(await claims.getPublic(first!.id)).toMatchObject({ status: 'pending', last_check: { ok: false } });
    proofs = first!.token;
    const verified = await claims.verify(first!.id);
    expect(verified).toMatchObject({ status: 'verified', verified_method: 'well-known' });
    const after = await claimRows('agt_c1');
    expect(after.filter((row) => row.status === 'rejected').map((row) => row.id)).toEqual(others.map((row) => row.id));
    expect(await eventsOf('agt_c1')).toEqual(['agent.verified', 'claim.approved']);
    const agent = await store.first(store.db.select().from(store.t.agents).where(eq(store.t.agents.id, 'agt_c1')));
    expect(agent).toMatchObject({ verified: true, ownerAccountId: ownerAccount.id, ownerName: ownerAccount.name });
  });

  it('two claims of one agent verified at the same moment: exactly one wins, the other is superseded', async () => {
    await addAgent('agt_race');
    const a = await claims.create({ agent_id: 'agt_race', claimant_name: 'A', claimant_email: 'a@race.test' });
    const b = await claims.create({ agent_id: 'agt_race', claimant_name: 'B', claimant_email: 'b@race.test' });
    const outcomes = await Promise.allSettled([claims.verifyManually(a.id, 'mod:one'), claims.verifyManually(b.id, 'mod:two')]);
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const lost = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost.map((outcome) => (outcome as PromiseRejectedResult).reason)).toEqual([expect.any(ConflictError)]);
    const rows = await claimRows('agt_race');
    expect(rows.map((row) => row.status).sort()).toEqual(['rejected', 'verified']);
    expect(rows.find((row) => row.status === 'rejected')!.reason).toMatch(/Another ownership claim/);
    expect(await eventsOf('agt_race')).toEqual(['agent.verified', 'claim.approved']);
  });

  it('rejects with a reason; a stale version or a decided claim is refused', async () => {
    await addAgent('agt_rej');
    const claim = await claims.create({ agent_id: 'agt_rej', claimant_name: 'R', claimant_email: 'r@b.test' });
    await expect(claims.reject(claim.id, 'no', 'mod', { expectedVersion: 7 })).rejects.toThrow(StaleVersionError);
    expect(await claims.reject(claim.id, '  Not the owner  ', 'mod', { expectedVersion: 1 })).toMatchObject({
      status: 'rejected',
      reason: 'Not the owner',
      version: 2,
    });
    await expect(claims.verifyManually(claim.id, 'mod')).rejects.toThrow(ConflictError);
  });

  it('re-checks verified ownership: strikes, then the mark goes, with a mail in the same transaction', async () => {
    now = new Date(now.getTime() + 8 * 24 * 3600_000);
    proofs = '';
    expect(await claims.recheckDue()).toMatchObject({ checked: 1, failed: 1, unverified: 0 });
    now = new Date(now.getTime() + 8 * 24 * 3600_000);
    expect(await claims.recheckDue()).toMatchObject({ checked: 1, failed: 1, unverified: 1 });
    const agent = await store.first(store.db.select().from(store.t.agents).where(eq(store.t.agents.id, 'agt_c1')));
    expect(agent?.verified).toBe(false);
    const mails = await store.rows(store.db.select().from(store.t.mailOutbox).where(eq(store.t.mailOutbox.to, ownerAccount.email)));
    expect(mails.map((mail) => mail.kind)).toEqual(['ownership.lost']);
    expect(await claims.recheckDue()).toMatchObject({ checked: 0 });
  });

  it('owners edit at once (profile fields) or through a request (name), reply to reviews, and two renames at once leave one request', async () => {
    await addAgent('agt_own', { ownerAccountId: ownerAccount.id, ownerName: ownerAccount.name, verified: true });
    const who = { accountId: ownerAccount.id, actor: `account:${ownerAccount.id}` };
    await expect(owners.get({ ...who, accountId: 'acc_other' }, 'agt_own')).rejects.toThrow(NotFoundError);
    expect(await owners.edit(who, 'agt_own', { tagline: 'Owned and edited' })).toMatchObject({
      kind: 'applied',
      agent: { tagline: 'Owned and edited' },
    });
    const renames = await Promise.allSettled([
      owners.edit(who, 'agt_own', { name: 'Renamed once' }),
      owners.edit(who, 'agt_own', { name: 'Renamed twice' }),
    ]);
    expect(renames.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(renames.filter((outcome) => outcome.status === 'rejected').map((outcome) => (outcome as PromiseRejectedResult).reason)).toEqual([
      expect.any(ConflictError),
    ]);
    expect(await editRequests.countPending()).toBe(1);
    expect(await owners.setStatus(who, 'agt_own', 'deprecated', ' Use v2 ')).toMatchObject({
      status: 'deprecated',
      status_message: 'Use v2',
    });

    const review = {
      id: 'rev_1',
      agentId: 'agt_own',
      rating: 5,
      comment: 'Great',
      reviewerName: 'R',
      hidden: false,
      createdAt: now.toISOString(),
    };
    await store.run(store.db.insert(store.t.reviews).values(review as typeof store.t.reviews.$inferInsert));
    expect(await owners.reply(who, 'agt_own', 'rev_1', 'Thanks')).toMatchObject({ id: 'rev_1', reply: { body: 'Thanks' } });
    expect(await owners.reply(who, 'agt_own', 'rev_1', 'Thanks again')).toMatchObject({ reply: { body: 'Thanks again' } });
    expect(await store.rows(store.db.select().from(store.t.reviewReplies))).toHaveLength(1);
    await expect(owners.reply(who, 'agt_own', 'rev_missing', 'x')).rejects.toThrow(NotFoundError);
  });

  it('edit requests: listed with their account, approved (the agent renamed) or rejected once, even when both come at once', async () => {
    const [pending] = (await editRequests.list({ page: 1, limit: 10, status: 'pending' })).items;
    expect(pending).toMatchObject({ agent_id: 'agt_own', account_name: ownerAccount.name, status: 'pending', version: 1 });
    expect((await editRequests.listForAccount(ownerAccount.id, { page: 1, limit: 10 })).total).toBe(1);
    const decisions = await Promise.allSettled([
      editRequests.approve(pending!.id, 'mod:one', { expectedVersion: 1 }),
      editRequests.reject(pending!.id, 'Misleading', 'mod:two', { expectedVersion: 1 }),
    ]);
    expect(decisions.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const decided = await editRequests.get(pending!.id);
    expect(decided.version).toBe(2);
    const agent = await store.first(store.db.select().from(store.t.agents).where(eq(store.t.agents.id, 'agt_own')));
    expect(agent!.name).toBe(decided.status === 'approved' ? pending!.changes.name : 'Agent agt_own');
    await expect(editRequests.approve(pending!.id, 'mod:three')).rejects.toThrow(ConflictError);
    expect(await editRequests.countPending()).toBe(0);
  });
});
