import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfig } from '../../src-api/config';
import { openDatabase, type Db } from '../../src-api/db/client';
import { claims } from '../../src-api/modules/claims/claims.table';
import { mailOutbox } from '../../src-api/modules/mail/mail.table';
import { createServices, type Services } from '../../src-api/services';
import { agentInput, makeTempDir } from '../helpers/test-server';

/**
 * The weekly re-check of verified ownership, with a clock the test moves: the services over a
 * real SQLite file, a real HTTP server standing in for GitHub's raw-file host, and the mail outbox.
 */

const DAY = 24 * 60 * 60 * 1000;
const INTERVAL = 7 * DAY;

let forgeOrigin = '';
const files = new Map<string, string>();
const forge = http.createServer((request, response) => {
  const body = files.get(request.url ?? '');
  if (body === undefined) return void response.writeHead(404, { 'content-type': 'text/plain' }).end('404: Not Found');
  response.writeHead(200, { 'content-type': 'text/plain' }).end(body);
});

let db: Db;
let services: Services;
let now = new Date('2026-01-05T10:00:00.000Z');
let counter = 0;

beforeAll(async () => {
  await new Promise<void>((resolve) => forge.listen(0, '127.0.0.1', resolve));
  forgeOrigin = `http://127.0.0.1:${(forge.address() as AddressInfo).port}`;
  const dataDir = makeTempDir();
  db = openDatabase(path.join(dataDir, 'recheck.sqlite'));
  const config = createConfig({
    dataDir,
    allowPrivateUrls: true,
    claimCheckTimeoutMs: 2_000,
    forgeRawBases: { 'github.com': `${forgeOrigin}/gh` },
    ownershipRecheckIntervalMs: INTERVAL,
  });
  services = createServices({ db, config, clock: { now: () => now } });
});
afterAll(async () => {
  db.$client.close();
  forge.closeAllConnections();
  await new Promise((resolve) => forge.close(resolve));
});

const advance = (ms: number) => {
  now = new Date(now.getTime() + ms);
};

/** An agent owned by a new account through a verified repository-file proof; returns where the proof lives. */
async function ownedAgent() {
  counter += 1;
  const { account } = await services.accounts.createVerified(
    { email: `owner${counter}@recheck.test`, name: `Owner ${counter}`, roles: [] },
    'test',
  );
  const agent = await services.agents.edits.create(
    agentInput({ name: `Rechecked ${counter}`, source_url: `https://github.com/acme/re-${counter}` }),
    {
      emitEvents: false,
    },
  );
  const claim = await services.claims.create(
    { agent_id: agent.id, claimant_name: 'Owner', claimant_email: `owner${counter}@recheck.test` },
    { accountId: account.id },
  );
  const proof = new URL(claim.verification.methods.find((method) => method.method === 'repository-file')!.url!).pathname;
  files.set(proof, claim.verification.token);
  await services.claims.verify(claim.id);
  return { agentId: agent.id, claimId: claim.id, proof, accountEmail: `owner${counter}@recheck.test` };
}

const claimRow = (id: string) => db.select().from(claims).where(eq(claims.id, id)).get()!;
const mailsTo = (to: string) => db.select().from(mailOutbox).where(eq(mailOutbox.to, to)).all();
const updatedEvents = async (agentId: string) =>
  (await services.events.listRecent(200)).filter((event) => event.type === 'agent.updated' && event.data.agent_id === agentId);

describe('ownership re-checks', () => {
  it('is not due before the interval; a proof that still holds clears the strikes', async () => {
    const { agentId, claimId, proof } = await ownedAgent();
    expect((await services.claims.recheckDue()).checked).toBe(0);

    advance(INTERVAL + 1);
    files.delete(proof);
    expect(await services.claims.recheckDue()).toMatchObject({ checked: 1, failed: 1 });
    expect((await services.claims.get(claimId)).last_check).toMatchObject({ ok: false });

    files.set(proof, (await services.claims.get(claimId)).verification.token);
    advance(INTERVAL + 1);
    expect(await services.claims.recheckDue()).toMatchObject({ checked: 1, held: 1 });
    expect(claimRow(claimId).recheckFailures).toBe(0);
    expect((await services.agents.getRow(agentId)).verified).toBe(true);
  });

  it('three failed re-checks in a row take the verified mark away (agent.updated) and mail the owner', async () => {
    const { agentId, claimId, proof, accountEmail } = await ownedAgent();
    files.delete(proof);
    for (let strike = 1; strike <= 2; strike++) {
      advance(INTERVAL + 1);
      await services.claims.recheckDue();
      expect(claimRow(claimId).recheckFailures).toBe(strike);
      expect((await services.agents.getRow(agentId)).verified).toBe(true);
      // Not again before the next interval.
      advance(DAY);
      await services.claims.recheckDue();
      expect(claimRow(claimId).recheckFailures).toBe(strike);
    }
    expect(mailsTo(accountEmail).filter((mail) => mail.kind === 'ownership.lost')).toEqual([]);

    advance(INTERVAL + 1);
    expect(await services.claims.recheckDue()).toMatchObject({ unverified: 1 });
    expect((await services.agents.getRow(agentId)).verified).toBe(false);
    expect((await updatedEvents(agentId)).map((event) => event.data.changed_fields)).toContainEqual(['verified']);
    const [mail] = mailsTo(accountEmail).filter((each) => each.kind === 'ownership.lost');
    expect(mail?.subject).toMatch(/no longer verified/);
    expect(mail?.text).toMatch(/HTTP 404/);
    expect((await services.audit.list({ entityId: agentId, page: 1, limit: 5 })).items[0]).toMatchObject({
      actor: 'system',
      action: 'agent.unverify',
    });

    // The claim is not re-checked any more.
    const before = claimRow(claimId);
    expect(before.nextRecheckAt).toBeNull();
    advance(INTERVAL + 1);
    await services.claims.recheckDue();
    expect(claimRow(claimId).version).toBe(before.version);
  });

  it('a manual verification by a moderator is never re-checked', async () => {
    counter += 1;
    const agent = await services.agents.edits.create(
      agentInput({ name: `Manual ${counter}`, source_url: `https://github.com/acme/manual-${counter}` }),
      {
        emitEvents: false,
      },
    );
    const claim = await services.claims.create({ agent_id: agent.id, claimant_name: 'M', claimant_email: 'm@recheck.test' });
    await services.claims.verifyManually(claim.id, 'mod');
    const before = claimRow(claim.id);
    advance(INTERVAL * 4);
    await services.claims.recheckDue();
    expect(claimRow(claim.id)).toMatchObject({ version: before.version, nextRecheckAt: null, recheckFailures: 0 });
    expect((await services.agents.getRow(agent.id)).verified).toBe(true);
  });
});
