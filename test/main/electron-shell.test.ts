import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, MainProcess, root } from './main-process-harness';

// The Electron binary never runs here: the built main process runs under Node
// with a stand-in `electron` (fixtures/fake-electron.mjs) that records what it is asked.

beforeAll(() => {
  // Builds out/ with electron-vite unless it is newer than every source.
  execFileSync(process.execPath, ['scripts/ensure-build.mjs', 'electron'], { cwd: root, stdio: 'inherit' });
}, 180_000);

describe('the desktop main process', () => {
  let main: MainProcess;
  let port: number;
  let apiBaseUrl: string;

  beforeAll(async () => {
    port = await freePort();
    main = MainProcess.start({ AGENTDIR_PORT: String(port) });
    apiBaseUrl = await main.apiBaseUrl();
  });
  afterAll(() => main?.kill());

  it('takes the single-instance lock', async () => {
    expect((await main.ask('state')).singleInstanceLockRequests).toBe(1);
  });

  it('serves the API in-process on AGENTDIR_PORT, with its database in userData', async () => {
    expect(apiBaseUrl).toBe(`http://127.0.0.1:${port}/api/v1`);
    const response = await fetch(`${apiBaseUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok' });
    expect(fs.existsSync(path.join(main.userData, 'agent-directory.sqlite'))).toBe(true);
    // The console goes over IPC: no /trpc and no /console on the network.
    expect((await fetch(`http://127.0.0.1:${port}/trpc/system.whoami`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/console`)).status).toBe(404);
  });

  it('opens one isolated, sandboxed window on the built console', async () => {
    const { windows } = await main.ask('state');
    expect(windows).toHaveLength(1);
    const { webPreferences } = windows[0].options;
    expect(webPreferences).toMatchObject({ contextIsolation: true, nodeIntegration: false, sandbox: true, webSecurity: true });
    expect(webPreferences.preload).toBe(path.join(root, 'out/preload/index.cjs'));
    expect(fs.existsSync(webPreferences.preload)).toBe(true);
    const loaded = fileURLToPath(windows[0].loadedUrl);
    expect(loaded).toBe(path.join(root, 'out/renderer/index.html'));
    expect(fs.existsSync(loaded)).toBe(true);
  });

  it('has a preload that can run sandboxed: one file that requires only electron', () => {
    const preload = fs.readFileSync(path.join(root, 'out/preload/index.cjs'), 'utf8');
    const required = [...preload.matchAll(/require\(\s*["']([^"']+)["']\s*\)/g)].map((match) => match[1]);
    expect(required).toEqual(['electron']);
    expect(preload).not.toMatch(/^\s*import\s/m);
    expect(preload).toContain('exposeInMainWorld("electronTRPC"');
  });

  it('puts the strict CSP on every response, replacing any other', async () => {
    const { responseHeaders } = await main.ask('headers', {
      url: 'file:///app/index.html',
      responseHeaders: { 'Content-Type': ['text/html'], 'content-security-policy': ["default-src *; script-src 'unsafe-eval'"] },
    });
    expect(responseHeaders['Content-Type']).toEqual(['text/html']);
    expect(responseHeaders['content-security-policy']).toBeUndefined();
    expect(responseHeaders['Content-Security-Policy']).toEqual([
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    ]);
  });

  it('grants no permissions', async () => {
    expect((await main.ask('state')).hasPermissionHandlers).toBe(true);
    expect(await main.ask('permission', { permission: 'media' })).toEqual({ granted: false });
  });

  it('keeps the window on the app: navigation elsewhere is prevented', async () => {
    const { windows } = await main.ask('state');
    const appUrl: string = windows[0].loadedUrl;
    expect(await main.ask('navigate', { url: 'https://evil.example/' })).toEqual({ prevented: true });
    expect(await main.ask('navigate', { url: 'file:///etc/passwd' })).toEqual({ prevented: true });
    expect(await main.ask('navigate', { url: `${appUrl}#/agents` })).toEqual({ prevented: false });
  });

  it('denies new windows and sends web links to the system browser', async () => {
    expect(await main.ask('windowOpen', { url: 'https://example.com/docs' })).toEqual({
      result: { action: 'deny' },
      openedExternal: ['https://example.com/docs'],
    });
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'smb://host/share']) {
      expect(await main.ask('windowOpen', { url })).toEqual({ result: { action: 'deny' }, openedExternal: [] });
    }
  });

  it('serves the tRPC router over IPC to the app, as desktop-moderator', async () => {
    const { windows, ipcChannels } = await main.ask('state');
    expect(ipcChannels).toContain('trpc-electron');
    const call = (path: string, input: unknown, senderUrl: string, id = 1) =>
      main.ask('ipc', {
        channel: 'trpc-electron',
        senderUrl,
        message: { method: 'request', operation: { id, type: 'query', path, input, context: {}, signal: null } },
      });

    expect(await call('system.whoami', undefined, windows[0].loadedUrl)).toEqual({
      id: 1,
      result: { type: 'data', data: { actor: 'desktop-moderator' } },
    });

    const missing = await call('agents.get', { id: 'no-such-agent' }, windows[0].loadedUrl, 2);
    expect(missing.error.data).toMatchObject({ code: 'not_found', httpStatus: 404, trpcCode: 'NOT_FOUND' });

    const invalid = await call('agents.list', { limit: 1000 }, windows[0].loadedUrl, 3);
    expect(invalid.error.data).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/limit' }] });
    expect(invalid.error.data.zodError.fieldErrors.limit).toHaveLength(1);

    // A frame that is not the app (say, one that navigated away) gets nothing.
    const foreign = await call('system.whoami', undefined, 'https://evil.example/', 4);
    expect(foreign.error.data).toMatchObject({ code: 'unauthorized', httpStatus: 401 });
  });

  it('closes the API before quitting', async () => {
    await main.ask('quit');
    expect(await main.exited).toBe(0);
    await expect(fetch(`${apiBaseUrl}/health`)).rejects.toThrow();
  });
});

describe('the desktop main process when its port is taken', () => {
  let main: MainProcess;
  let blocker: net.Server;

  beforeAll(async () => {
    blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    main?.kill();
    await new Promise((resolve) => blocker.close(resolve));
  });

  it('serves the API on a free port instead', async () => {
    const taken = (blocker.address() as net.AddressInfo).port;
    main = MainProcess.start({ AGENTDIR_PORT: String(taken) });
    const apiBaseUrl = await main.apiBaseUrl();
    expect(new URL(apiBaseUrl).port).not.toBe(String(taken));
    expect((await fetch(`${apiBaseUrl}/health`)).status).toBe(200);
    await main.ask('quit');
    expect(await main.exited).toBe(0);
  });
});
