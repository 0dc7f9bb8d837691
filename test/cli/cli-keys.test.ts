import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from '../helpers/test-server';
import { makeTempDir, runCli, select, CLI_TEST_TIMEOUT } from './cli-helpers';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('cli keys', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('creates a key that a running server accepts, lists it without secrets, and revokes it at once', async () => {
    const dataDir = path.join(makeTempDir('agentdir-cli-keys-'), 'data');
    server = await startTestServer({ dataDir });

    const created = await runCli(['keys', 'create', '--name', 'CI bot', '--data-dir', dataDir]);
    expect(created.code).toBe(0);
    expect(created.stderr).toBe('');
    const lines = created.stdout.split('\n');
    expect(lines).toHaveLength(2); // exactly one JSON line
    expect(lines[0]).toMatch(/^\{"id":"key_[a-z0-9]+","key":"adk_[A-Za-z0-9_-]+",/);
    const key = JSON.parse(lines[0]!);
    expect(key).toMatchObject({ name: 'CI bot', revoked_at: null });

    // Only a hash is stored.
    const stored = await select(dataDir, ({ db, t }) => db.select().from(t.apiKeys));
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(key.key);

    // The server (started before the key existed) accepts it both ways, and tells a bad key apart.
    expect((await server.api('/agents', { headers: { authorization: `Bearer ${key.key}` } })).status).toBe(200);
    expect((await server.api('/agents', { headers: { 'x-api-key': key.key } })).status).toBe(200);
    const bogus = await server.api('/agents', { headers: { authorization: 'Bearer adk_not-a-real-key' } });
    expect(bogus.status).toBe(401);

    const listed = await runCli(['keys', 'list', '--data-dir', dataDir]);
    expect(listed.code).toBe(0);
    const list = JSON.parse(listed.stdout);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: key.id, name: 'CI bot', revoked_at: null });
    expect(list[0].last_used_at).toEqual(expect.any(String)); // the server authenticated with it
    expect(listed.stdout).not.toContain(key.key);
    expect(Object.keys(list[0])).not.toEqual(expect.arrayContaining(['key']));
    expect(Object.keys(list[0]).some((field) => /hash/i.test(field))).toBe(false);

    const revoked = await runCli(['keys', 'revoke', key.id, '--data-dir', dataDir]);
    expect(revoked.code).toBe(0);
    const summary = JSON.parse(revoked.stdout);
    expect(summary).toMatchObject({ id: key.id, name: 'CI bot', revoked_at: expect.any(String) });
    expect(revoked.stdout).not.toContain(key.key);

    const afterRevoke = await server.api('/agents', { headers: { authorization: `Bearer ${key.key}` } });
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.headers.get('content-type')).toContain('application/problem+json');
    expect((await json(afterRevoke)).code).toBe('invalid_api_key');
  });

  it('fails with exit code 1 for an unknown key id, and 2 for a missing or empty --name', async () => {
    const dataDir = path.join(makeTempDir('agentdir-cli-keys-'), 'data');
    expect(await runCli(['keys', 'revoke', 'key_doesnotexist', '--data-dir', dataDir])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: API key "key_doesnotexist" not found\n',
    });

    const missingName = await runCli(['keys', 'create', '--data-dir', dataDir]);
    expect(missingName.code).toBe(2);
    expect(missingName.stderr).toContain("required option '--name <name>' not specified");

    const emptyName = await runCli(['keys', 'create', '--name', '   ', '--data-dir', dataDir]);
    expect(emptyName.code).toBe(2);
    expect(emptyName.stderr).toContain('the name must not be empty');

    expect(JSON.parse((await runCli(['keys', 'list', '--data-dir', dataDir])).stdout)).toEqual([]);
  });
});
