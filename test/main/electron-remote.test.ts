import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { CHOICE_URL, SETTINGS_FILE } from '../../src-main/server-choice';
import { GOOD_PASSWORD, sessionCookieOf } from '../helpers/accounts';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { freePort, MainProcess, root } from './main-process-harness';

// The desktop app pointed at a team's server (--server URL, the remembered choice, the first-start screen), run as
// the built main process under Node with the stand-in `electron` (fixtures/fake-electron.mjs).

beforeAll(() => {
  execFileSync(process.execPath, ['scripts/ensure-build.mjs', 'electron'], { cwd: root, stdio: 'inherit' });
  execFileSync(process.execPath, ['scripts/ensure-build.mjs', 'web'], { cwd: root, stdio: 'inherit' });
}, 240_000);

async function waitForLog(main: MainProcess, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(main.log);
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`no ${pattern} in the main process's output:\n${main.log}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Nothing listens on the port the local API would take. */
async function nothingOn(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/api/v1/health`).then(
    () => false,
    () => true,
  );
}

const settingsOf = (main: MainProcess) => JSON.parse(fs.readFileSync(path.join(main.userData, SETTINGS_FILE), 'utf8'));

describe('the desktop app with --server', () => {
  let team: TestServer;
  const started: MainProcess[] = [];
  const start = (...args: Parameters<typeof MainProcess.start>) => {
    const main = MainProcess.start(...args);
    started.push(main);
    return main;
  };

  beforeAll(async () => {
    // A real team server, serving its web console (as `npm run serve` does).
    team = await startTestServer(
      { adminToken: 'team-admin-token-0123456789' },
      { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
    );
    await team.services.accounts.createVerified(
      { email: 'mod@team.example', name: 'Team Moderator', roles: ['moderator'], password: GOOD_PASSWORD },
      'test',
    );
  });
  afterAll(async () => {
    await team?.close();
  });
  afterEach(() => started.splice(0).forEach((main) => main.kill()));

  it('starts no server of its own and shows the server’s console, with no bridge into the app', async () => {
    const port = await freePort();
    const serverUrl = new URL(team.apiBaseUrl).origin;
    const main = start({ AGENTDIR_PORT: String(port) }, ['--server', `${serverUrl}/`]);
    await waitForLog(main, /Agent Directory server: (\S+)/);

    const { windows, ipcChannels } = await main.ask('state');
    expect(windows).toHaveLength(1);
    expect(windows[0].loadedUrl).toBe(`${serverUrl}/console/`);
    expect(windows[0].options.webPreferences).toMatchObject({ contextIsolation: true, nodeIntegration: false, sandbox: true });
    expect(windows[0].options.webPreferences.preload).toBeUndefined();
    expect(ipcChannels).not.toContain('trpc-electron');
    expect(main.log).not.toMatch(/Agent Directory API:/);
    expect(await nothingOn(port)).toBe(true);
    expect(fs.existsSync(path.join(main.userData, 'agent-directory.sqlite'))).toBe(false);

    // What the window loads is the server's console, which calls that server's /trpc and signs in with an account.
    const page = await fetch(windows[0].loadedUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toMatch(/<div id="app">|<script/);
    expect((await fetch(`${serverUrl}/trpc/system.whoami`)).status).toBe(401);
    const signIn = await team.post('/sessions', { email: 'mod@team.example', password: GOOD_PASSWORD });
    expect(signIn.status).toBe(201);
    const whoami = await fetch(`${serverUrl}/trpc/system.whoami`, { headers: { cookie: sessionCookieOf(signIn), origin: serverUrl } });
    expect(whoami.status).toBe(200);
    expect(JSON.stringify(await whoami.json())).toContain('mod@team.example');

    // The window stays on that server: its own pages load, anything else does not.
    expect(await main.ask('navigate', { url: `${serverUrl}/dashboard/keys` })).toEqual({ prevented: false });
    expect(await main.ask('navigate', { url: 'https://evil.example/console/' })).toEqual({ prevented: true });
    expect(await main.ask('navigate', { url: 'file:///etc/passwd' })).toEqual({ prevented: true });

    expect(settingsOf(main)).toEqual({ connection: { mode: 'server', url: serverUrl } });
    await main.ask('quit');
    expect(await main.exited).toBe(0);
  });

  it('remembers the server: the next start without a flag connects again, and --local goes back to hosting', async () => {
    const first = start({}, ['--server', 'https://directory.example.com']);
    await waitForLog(first, /Agent Directory server:/);
    await first.ask('quit');
    await first.exited;

    const port = await freePort();
    const second = start({ AGENTDIR_PORT: String(port) }, [], first.userData);
    await waitForLog(second, /Agent Directory server: https:\/\/directory\.example\.com/);
    expect((await second.ask('state')).windows[0].loadedUrl).toBe('https://directory.example.com/console/');
    expect(await nothingOn(port)).toBe(true);
    await second.ask('quit');
    await second.exited;

    const third = start({ AGENTDIR_PORT: String(port) }, ['--local'], first.userData);
    expect(await third.apiBaseUrl()).toBe(`http://127.0.0.1:${port}/api/v1`);
    expect(settingsOf(third)).toEqual({ connection: { mode: 'local' } });
    const { windows, ipcChannels } = await third.ask('state');
    expect(windows[0].options.webPreferences.preload).toBe(path.join(root, 'out/preload/index.cjs'));
    expect(ipcChannels).toContain('trpc-electron');
  });

  it('refuses a bad --server URL with a clear reason, starts nothing and remembers nothing', async () => {
    const port = await freePort();
    const main = start({ AGENTDIR_PORT: String(port) }, ['--server', 'http://directory.example.com']);
    await waitForLog(main, /Agent Directory: .*unencrypted/);
    const { windows } = await main.ask('state');
    expect(windows).toHaveLength(1);
    const page = Buffer.from(windows[0].loadedUrl.split(',')[1], 'base64').toString('utf8');
    expect(windows[0].loadedUrl).toMatch(/^data:text\/html/);
    expect(page).toContain('role="alert"');
    expect(page).toMatch(/uses http: passwords and sessions would cross the network unencrypted/);
    expect(page).toContain('value="http://directory.example.com"');
    expect(await nothingOn(port)).toBe(true);
    expect(fs.existsSync(path.join(main.userData, SETTINGS_FILE))).toBe(false);
  });
});

describe('the first-start connection screen', () => {
  const started: MainProcess[] = [];
  afterEach(() => started.splice(0).forEach((main) => main.kill()));

  it('asks first; a bad address is shown again with the reason, a good one opens the server’s console', async () => {
    const port = await freePort();
    const main = MainProcess.start({ AGENTDIR_PORT: String(port) }, []);
    started.push(main);
    const screen = async () => {
      const { windows } = await main.ask('state');
      return windows[0];
    };
    await expect.poll(async () => (await screen())?.loadedUrl ?? '').toMatch(/^data:text\/html/);
    expect(await nothingOn(port)).toBe(true);

    // Anything but the form's choice is stopped, and changes nothing.
    expect(await main.ask('navigate', { url: 'https://evil.example/' })).toEqual({ prevented: true });
    expect(await main.ask('navigate', { url: `${CHOICE_URL}?where=server&url=ftp%3A%2F%2Fx.example.com` })).toEqual({ prevented: true });
    const again = Buffer.from((await screen()).loadedUrl.split(',')[1], 'base64').toString('utf8');
    expect(again).toMatch(/not a web address/);

    await main.ask('navigate', { url: `${CHOICE_URL}?where=server&url=${encodeURIComponent('https://team.example.com/')}` });
    await waitForLog(main, /Agent Directory server: https:\/\/team\.example\.com/);
    const { windows } = await main.ask('state');
    expect(windows).toHaveLength(2);
    expect(windows[0].closed).toBe(true);
    expect(windows[1].loadedUrl).toBe('https://team.example.com/console/');
    expect(settingsOf(main)).toEqual({ connection: { mode: 'server', url: 'https://team.example.com' } });
    expect(await nothingOn(port)).toBe(true);
  });

  it('"This computer" hosts the directory here, as without the screen', async () => {
    const port = await freePort();
    const main = MainProcess.start({ AGENTDIR_PORT: String(port) }, []);
    started.push(main);
    await expect.poll(async () => (await main.ask('state')).windows.length).toBe(1);
    await main.ask('navigate', { url: `${CHOICE_URL}?where=local&url=` });
    expect(await main.apiBaseUrl()).toBe(`http://127.0.0.1:${port}/api/v1`);
    const { windows } = await main.ask('state');
    expect(windows).toHaveLength(2);
    expect(windows[0].closed).toBe(true);
    expect(windows[1].options.webPreferences.preload).toBe(path.join(root, 'out/preload/index.cjs'));
    expect(settingsOf(main)).toEqual({ connection: { mode: 'local' } });
  });
});
