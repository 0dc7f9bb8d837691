import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { GOOD_PASSWORD, sessionCookieOf } from '../helpers/accounts';
import { json, startTestServer, type TestServer } from '../helpers/test-server';
import { makeTempDir, runCli, select, CLI_TEST_TIMEOUT } from './cli-helpers';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const tokenOf = (url: string): string => new URL(url).searchParams.get('token')!;

describe('cli accounts', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('creates a verified admin with a set-password link that a running server honours, once', async () => {
    const dataDir = path.join(makeTempDir('agentdir-cli-accounts-'), 'data');
    server = await startTestServer({ dataDir });

    const created = await runCli([
      'accounts',
      'create',
      '--email',
      'Root@Example.test',
      '--name',
      'Root',
      '--role',
      'admin',
      '--data-dir',
      dataDir,
    ]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const account = JSON.parse(created.stdout);
    expect(account).toMatchObject({
      id: expect.stringMatching(/^acc_/),
      email: 'Root@Example.test',
      name: 'Root',
      email_verified: true,
      roles: ['admin'],
      set_password_url: expect.stringMatching(/\/dashboard\/reset-password\?token=[A-Za-z0-9_-]{40,}$/),
    });

    const token = tokenOf(account.set_password_url);
    expect((await server.post('/accounts/password-reset/confirm', { token, password: GOOD_PASSWORD })).status).toBe(200);
    expect((await server.post('/accounts/password-reset/confirm', { token, password: GOOD_PASSWORD })).status).toBe(400);
    const session = await server.post('/sessions', { email: 'root@example.test', password: GOOD_PASSWORD });
    expect(session.status).toBe(201);
    expect((await json(session)).account.roles).toEqual(['admin']);
    expect(sessionCookieOf(session)).toMatch(/^agentdir_session=/);

    // Only a hash of the password and of the link's token are stored; the creation is audited as the CLI.
    expect(JSON.stringify(await select(dataDir, ({ db, t }) => db.select().from(t.oneTimeTokens)))).not.toContain(token);
    const audited = await select(dataDir, ({ db, t }) =>
      db.select({ actor: t.auditLog.actor, action: t.auditLog.action }).from(t.auditLog).where(eq(t.auditLog.entityType, 'account')),
    );
    expect(audited).toEqual([{ actor: 'cli', action: 'account.create' }]);
  });

  it('sets the password from stdin, grants and revokes roles, and lists by role', async () => {
    const dataDir = path.join(makeTempDir('agentdir-cli-accounts-'), 'data');
    const created = await runCli(
      ['accounts', 'create', '--email', 'mod@example.test', '--name', 'Mod', '--password-stdin', '--data-dir', dataDir],
      {},
      `${GOOD_PASSWORD}\n`,
    );
    expect(created.code).toBe(0);
    const account = JSON.parse(created.stdout);
    expect(account.roles).toEqual([]);
    expect(account.set_password_url).toBeUndefined();

    const granted = await runCli(['accounts', 'grant', 'MOD@example.test', '--role', 'moderator', '--data-dir', dataDir]);
    expect(granted.code).toBe(0);
    expect(JSON.parse(granted.stdout)).toMatchObject({ id: account.id, roles: ['moderator'], disabled: false });
    expect(
      JSON.parse((await runCli(['accounts', 'grant', 'mod@example.test', '--role', 'admin', '--data-dir', dataDir])).stdout).roles,
    ).toEqual(['moderator', 'admin']);

    const admins = JSON.parse((await runCli(['accounts', 'list', '--role', 'admin', '--data-dir', dataDir])).stdout);
    expect(admins.map((a: { email: string }) => a.email)).toEqual(['mod@example.test']);
    const revoked = await runCli(['accounts', 'revoke-role', 'mod@example.test', '--role', 'admin', '--data-dir', dataDir]);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout).roles).toEqual(['moderator']);
    expect(JSON.parse((await runCli(['accounts', 'list', '--role', 'admin', '--data-dir', dataDir])).stdout)).toEqual([]);

    server = await startTestServer({ dataDir });
    expect((await server.post('/sessions', { email: 'mod@example.test', password: GOOD_PASSWORD })).status).toBe(201);
  });

  it('refuses bad input with a clear message and writes nothing', async () => {
    const dataDir = path.join(makeTempDir('agentdir-cli-accounts-'), 'data');
    const badEmail = await runCli(['accounts', 'create', '--email', 'not-an-address', '--name', 'X', '--data-dir', dataDir]);
    expect(badEmail.code).toBe(2);
    expect(badEmail.stderr).toContain('not an e-mail address');
    const badRole = await runCli([
      'accounts',
      'create',
      '--email',
      'x@example.test',
      '--name',
      'X',
      '--role',
      'owner',
      '--data-dir',
      dataDir,
    ]);
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toMatch(/moderator, admin/);
    const weak = await runCli(
      ['accounts', 'create', '--email', 'x@example.test', '--name', 'X', '--password-stdin', '--data-dir', dataDir],
      {},
      'password',
    );
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/^error: .*password/i);
    const unknown = await runCli(['accounts', 'grant', 'nobody@example.test', '--role', 'admin', '--data-dir', dataDir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('nobody@example.test');
    expect(await select(dataDir, ({ db, t }) => db.select({ id: t.accounts.id }).from(t.accounts))).toEqual([]);

    expect((await runCli(['accounts', 'create', '--email', 'x@example.test', '--name', 'X', '--data-dir', dataDir])).code).toBe(0);
    const twice = await runCli(['accounts', 'create', '--email', 'X@example.test', '--name', 'X', '--data-dir', dataDir]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('exists already');
  });
});
