import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { GOOD_PASSWORD, sessionCookieOf } from '../helpers/accounts';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { trpcCall, type TrpcAnswer } from '../helpers/trpc';
import { makeTempDir } from '../helpers/temp-dir';

/**
 * People sign in to the console with their accounts: the session cookie opens
 * /trpc for accounts with a role, every action is audited with the account, and
 * the admin role guards accounts, keys, webhooks and the newsletter.
 */

const ADMIN_TOKEN = 'test-admin-token-0123456789';
let server: TestServer;
let webRoot: string;
let adminCookie: string;
let moderatorCookie: string;
let developerCookie: string;
let adminId: string;
let moderatorId: string;
let developerId: string;
let agentId: string;

type Init = { cookie?: string; token?: string; origin?: string };
const headersOf = ({ cookie, token, origin }: Init): Record<string, string> => ({
  ...(cookie && { cookie }),
  ...(token && { authorization: `Bearer ${token}` }),
  ...(origin && { origin }),
});
const trpcQuery = (procedure: string, input: unknown, init: Init) => trpcCall(server.origin, 'query', procedure, input, headersOf(init));
const trpcMutation = (procedure: string, input: unknown, init: Init) =>
  trpcCall(server.origin, 'mutation', procedure, input, headersOf(init));
const data = (answer: TrpcAnswer) => answer.data;

async function accountWithRoles(email: string, roles: ('moderator' | 'admin')[]): Promise<{ cookie: string; id: string }> {
  const { account } = await server.services.accounts.createVerified(
    { email, name: email.split('@')[0]!, roles, password: GOOD_PASSWORD },
    'test',
  );
  const session = await server.post('/sessions', { email, password: GOOD_PASSWORD });
  expect(session.status).toBe(201);
  return { cookie: sessionCookieOf(session), id: account.id };
}

beforeAll(async () => {
  webRoot = makeTempDir('agentdir-web-');
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken, { webRoot }) },
  );
  agentId = (await server.services.agents.edits.create(agentInput({ name: 'Audited Agent' }), { emitEvents: false })).id;
  ({ cookie: adminCookie, id: adminId } = await accountWithRoles('admin@console.test', ['admin']));
  ({ cookie: moderatorCookie, id: moderatorId } = await accountWithRoles('mod@console.test', ['moderator']));
  ({ cookie: developerCookie, id: developerId } = await accountWithRoles('dev@console.test', []));
});
afterAll(async () => {
  await server.close();
  fs.rmSync(webRoot, { recursive: true, force: true });
});

describe('signing in to the console with an account', () => {
  it('answers session.me with the account, its roles and its audit name', async () => {
    const me = await trpcQuery('session.me', undefined, { cookie: moderatorCookie });
    expect(me.status).toBe(200);
    expect(data(me)).toMatchObject({
      actor: `mod@console.test (${moderatorId})`,
      via: 'account',
      roles: ['moderator'],
      account: { id: moderatorId, email: 'mod@console.test' },
    });
    expect(data(await trpcQuery('session.me', undefined, { token: ADMIN_TOKEN }))).toEqual({
      actor: 'admin-token',
      via: 'admin-token',
      roles: ['admin'],
      account: null,
    });
  });

  it('refuses an account without a role (403), no session (401) and an ended session (401)', async () => {
    const developer = await trpcQuery('session.me', undefined, { cookie: developerCookie });
    expect(developer.status).toBe(403);
    expect(developer.headers.get('content-type')).toContain('application/problem+json');
    expect(developer.body.code).toBe('console_role_required');
    expect((await trpcQuery('session.me', undefined, {})).status).toBe(401);
    expect((await trpcQuery('session.me', undefined, { cookie: 'agentdir_session=made-up' })).status).toBe(401);
    // A wrong token is refused even with a good cookie beside it: never a silent fallback.
    expect((await trpcQuery('session.me', undefined, { cookie: adminCookie, token: 'wrong' })).status).toBe(401);
  });

  it('refuses a mutation with the cookie from another origin (CSRF), before anything is written', async () => {
    const before = data(await trpcQuery('agents.get', { id: agentId }, { token: ADMIN_TOKEN })).version;
    for (const origin of ['https://evil.example', 'null']) {
      const response = await trpcMutation(
        'agents.update',
        { id: agentId, patch: { tagline: 'cross-site' }, expectedVersion: before },
        { cookie: moderatorCookie, origin },
      );
      expect(response.status, origin).toBe(403);
      expect(response.body.code).toBe('cross_site_request');
    }
    const crossSite = await fetch(`${server.origin}/trpc/agents.update`, {
      method: 'POST',
      headers: { cookie: moderatorCookie, 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
      body: JSON.stringify({ id: agentId, patch: { tagline: 'cross-site' }, expectedVersion: before }),
    });
    expect(crossSite.status).toBe(403);
    expect(data(await trpcQuery('agents.get', { id: agentId }, { token: ADMIN_TOKEN })).version).toBe(before);
    // The console's own origin is fine.
    const own = await trpcMutation(
      'agents.update',
      { id: agentId, patch: { tagline: 'Edited by a moderator' }, expectedVersion: before },
      { cookie: moderatorCookie, origin: server.origin },
    );
    expect(own.status).toBe(200);
  });

  it('audits each action with the account, the admin token as admin-token', async () => {
    const current = data(await trpcQuery('agents.get', { id: agentId }, { cookie: moderatorCookie }));
    expect(
      (
        await trpcMutation(
          'agents.update',
          { id: agentId, patch: { author: 'Token Co' }, expectedVersion: current.version },
          { token: ADMIN_TOKEN },
        )
      ).status,
    ).toBe(200);
    const entries = data(await trpcQuery('audit.list', { entityId: agentId }, { cookie: moderatorCookie })).entries;
    expect(entries.map((entry: { actor: string }) => entry.actor)).toEqual(['admin-token', `mod@console.test (${moderatorId})`]);
  });
});

describe('roles', () => {
  it('keeps accounts, keys, webhooks and the newsletter from moderators (403 admin_role_required)', async () => {
    for (const [procedure, input] of [
      ['accounts.list', {}],
      ['keys.list', undefined],
      ['webhooks.list', undefined],
      ['newsletter.list', {}],
    ] as const) {
      const response = await trpcQuery(procedure, input, { cookie: moderatorCookie });
      expect(response.status, procedure).toBe(403);
      expect(response.body.error.data.code, procedure).toBe('admin_role_required');
      expect((await trpcQuery(procedure, input, { cookie: adminCookie })).status, procedure).toBe(200);
    }
    expect((await trpcMutation('keys.create', { name: 'by a moderator' }, { cookie: moderatorCookie })).status).toBe(403);
    expect(await server.services.keys.list()).toEqual([]);
  });

  it('lets an admin search accounts, grant and revoke roles, audited with the admin', async () => {
    const found = data(await trpcQuery('accounts.list', { q: 'DEV@' }, { cookie: adminCookie }));
    expect(found).toMatchObject({ total: 1, accounts: [{ id: developerId, roles: [], disabled: false }] });
    // An exact account id finds its account (the audit log links there); a fragment of an id finds nothing.
    const byId = data(await trpcQuery('accounts.list', { q: developerId }, { cookie: adminCookie }));
    expect(byId).toMatchObject({ total: 1, accounts: [{ id: developerId }] });
    expect(data(await trpcQuery('accounts.list', { q: developerId.slice(0, -2) }, { cookie: adminCookie })).total).toBe(0);
    const moderators = data(await trpcQuery('accounts.list', { role: 'moderator' }, { cookie: adminCookie }));
    expect(moderators.accounts.map((a: { id: string }) => a.id)).toEqual([moderatorId]);

    const granted = await trpcMutation(
      'accounts.grantRole',
      { id: developerId, role: 'moderator' },
      { cookie: adminCookie, origin: server.origin },
    );
    expect(data(granted)).toMatchObject({ id: developerId, roles: ['moderator'] });
    // The same session now opens the console.
    expect((await trpcQuery('session.me', undefined, { cookie: developerCookie })).status).toBe(200);
    await trpcMutation('accounts.revokeRole', { id: developerId, role: 'moderator' }, { cookie: adminCookie });
    expect((await trpcQuery('session.me', undefined, { cookie: developerCookie })).status).toBe(403);

    const audit = data(await trpcQuery('audit.list', { entityId: developerId }, { cookie: adminCookie }));
    expect(audit.entries.map((e: { actor: string; action: string }) => [e.action, e.actor])).toEqual([
      ['account.roles', `admin@console.test (${adminId})`],
      ['account.roles', `admin@console.test (${adminId})`],
      ['account.create', 'test'],
    ]);
  });

  it('creates an account with a set-password link, and refuses bad input', async () => {
    const created = data(
      await trpcMutation(
        'accounts.create',
        { email: 'new-mod@console.test', name: 'New Mod', roles: ['moderator'] },
        { cookie: adminCookie },
      ),
    );
    expect(created).toMatchObject({
      account: { email: 'new-mod@console.test', roles: ['moderator'], email_verified: true },
      set_password_url: expect.stringContaining('/dashboard/reset-password?token='),
    });
    for (const input of [
      { email: 'not-an-address', name: 'X' },
      { email: 'x@console.test', name: '' },
      { email: 'x@console.test', name: 'X', roles: ['owner'] },
      { email: 'x@console.test', name: 'X', extra: true },
      { email: 'NEW-MOD@console.test', name: 'Again' },
    ]) {
      const response = await trpcMutation('accounts.create', input, { cookie: adminCookie });
      expect(response.status, JSON.stringify(input)).toBe(400);
    }
    expect(data(await trpcQuery('accounts.list', { q: 'x@console' }, { cookie: adminCookie })).total).toBe(0);
  });

  it('disables an account: no sign-in, sessions and keys refused; enabling restores the keys', async () => {
    const { cookie, id } = await accountWithRoles('leaving@console.test', ['moderator']);
    const key = (
      await json(
        await server.api('/me/keys', { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: '{"name":"k"}' }),
      )
    ).key;
    expect((await server.api('/agents?limit=1', { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

    const disabled = data(await trpcMutation('accounts.setDisabled', { id, disabled: true }, { cookie: adminCookie }));
    expect(disabled).toMatchObject({ id, disabled: true });
    expect((await trpcQuery('session.me', undefined, { cookie })).status).toBe(401);
    expect((await server.api('/me', { headers: { cookie } })).status).toBe(401);
    const keyed = await server.api('/agents?limit=1', { headers: { authorization: `Bearer ${key}` } });
    expect(keyed.status).toBe(401);
    expect((await json(keyed)).code).toBe('invalid_api_key');
    const signIn = await server.post('/sessions', { email: 'leaving@console.test', password: GOOD_PASSWORD });
    expect(signIn.status).toBe(403);
    expect((await json(signIn)).code).toBe('account_disabled');

    await trpcMutation('accounts.setDisabled', { id, disabled: false }, { cookie: adminCookie });
    expect((await server.api('/agents?limit=1', { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  });

  it('will not let an admin lock themselves out (409)', async () => {
    const selfRevoke = await trpcMutation('accounts.revokeRole', { id: adminId, role: 'admin' }, { cookie: adminCookie });
    expect(selfRevoke.status).toBe(409);
    const selfDisable = await trpcMutation('accounts.setDisabled', { id: adminId, disabled: true }, { cookie: adminCookie });
    expect(selfDisable.status).toBe(409);
    expect(data(await trpcQuery('session.me', undefined, { cookie: adminCookie })).roles).toEqual(['admin']);
    expect((await trpcQuery('accounts.get', { id: 'acc_missing' }, { cookie: adminCookie })).status).toBe(404);
  });
});
