import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CHOICE_URL,
  choiceFromUrl,
  connectionFlag,
  connectionPage,
  parseServerUrl,
  planStart,
  readConnection,
  saveConnection,
  SETTINGS_FILE,
} from '../../src-main/server-choice';
import { makeTempDir } from '../helpers/temp-dir';

// The desktop app's choice of directory (src-main/server-choice.ts), without electron.

describe('parseServerUrl', () => {
  it('takes https anywhere and http only to this machine, normalized to a base without a trailing slash', () => {
    expect(parseServerUrl(' https://directory.example.com/ ')).toEqual({ ok: true, url: 'https://directory.example.com' });
    expect(parseServerUrl('https://example.com:8443/agents//')).toEqual({ ok: true, url: 'https://example.com:8443/agents' });
    expect(parseServerUrl('HTTPS://Directory.Example.com')).toEqual({ ok: true, url: 'https://directory.example.com' });
    expect(parseServerUrl('http://127.0.0.1:8787')).toEqual({ ok: true, url: 'http://127.0.0.1:8787' });
    expect(parseServerUrl('http://localhost:8787/')).toEqual({ ok: true, url: 'http://localhost:8787' });
    expect(parseServerUrl('http://[::1]:8787')).toEqual({ ok: true, url: 'http://[::1]:8787' });
  });

  it('refuses everything else with a reason a person can act on', () => {
    const refused = (input: string) => {
      const result = parseServerUrl(input);
      expect(result.ok, input).toBe(false);
      return result.ok ? '' : result.error;
    };
    expect(refused('')).toMatch(/Enter the server/);
    expect(refused('directory.example.com')).toMatch(/not a URL/);
    expect(refused('http://directory.example.com')).toMatch(/unencrypted.*https:\/\//);
    expect(refused('http://10.0.0.5:8787')).toMatch(/http/);
    expect(refused('http://127.0.0.1.example.com')).toMatch(/http/);
    expect(refused('ftp://directory.example.com')).toMatch(/not a web address/);
    expect(refused('file:///etc/passwd')).toMatch(/not a web address/);
    expect(refused('javascript:alert(1)')).toMatch(/not a web address/);
    expect(refused('https://admin:secret@directory.example.com')).toMatch(/user name and password/);
    expect(refused('https://directory.example.com/?next=/x')).toMatch(/without “\?” or “#”/);
  });
});

describe('the start plan', () => {
  const server = { mode: 'server', url: 'https://team.example.com' } as const;

  it('follows --server and --local first, remembering them', () => {
    expect(connectionFlag(['app', '--server', 'https://a.example.com'])).toEqual({ server: 'https://a.example.com' });
    expect(connectionFlag(['app', '--server=https://a.example.com'])).toEqual({ server: 'https://a.example.com' });
    expect(connectionFlag(['app', '--server', 'https://a.example.com', '--local'])).toEqual({ local: true });
    expect(connectionFlag(['app'])).toBeUndefined();
    expect(planStart(['--server', 'https://a.example.com/'], server)).toEqual({
      kind: 'server',
      url: 'https://a.example.com',
      remember: true,
    });
    expect(planStart(['--local'], server)).toEqual({ kind: 'local', remember: true });
  });

  it('uses the remembered choice without a flag, and asks on the first start', () => {
    expect(planStart([], server)).toEqual({ kind: 'server', url: 'https://team.example.com', remember: false });
    expect(planStart([], { mode: 'local' })).toEqual({ kind: 'local', remember: false });
    expect(planStart([], undefined)).toEqual({ kind: 'ask' });
    // A saved URL that no longer passes (edited by hand) is no choice.
    expect(planStart([], { mode: 'server', url: 'http://team.example.com' })).toEqual({ kind: 'ask' });
  });

  it('asks again, with the reason and what was typed, when --server is refused; nothing is remembered', () => {
    const plan = planStart(['--server', 'http://team.example.com'], { mode: 'local' });
    expect(plan).toMatchObject({ kind: 'ask', input: 'http://team.example.com' });
    expect(plan.kind === 'ask' && plan.error).toMatch(/https/);
    expect(planStart(['--server'], undefined)).toMatchObject({ kind: 'ask', error: expect.stringMatching(/Enter the server/) });
  });
});

describe('the settings file', () => {
  const folders: string[] = [];
  const folder = () => {
    const made = makeTempDir('agentdir-settings-');
    folders.push(made);
    return made;
  };
  afterEach(() => folders.splice(0).forEach((made) => fs.rmSync(made, { recursive: true, force: true })));

  it('remembers the choice, keeps other settings, and reads nothing from a missing or broken file', () => {
    const userData = folder();
    expect(readConnection(userData)).toBeUndefined();
    fs.writeFileSync(path.join(userData, SETTINGS_FILE), JSON.stringify({ theme: 'dark' }));
    saveConnection(userData, { mode: 'server', url: 'https://team.example.com' });
    expect(readConnection(userData)).toEqual({ mode: 'server', url: 'https://team.example.com' });
    expect(JSON.parse(fs.readFileSync(path.join(userData, SETTINGS_FILE), 'utf8')).theme).toBe('dark');
    saveConnection(userData, { mode: 'local' });
    expect(readConnection(userData)).toEqual({ mode: 'local' });
    expect(fs.readdirSync(userData)).toEqual([SETTINGS_FILE]);
    fs.writeFileSync(path.join(userData, SETTINGS_FILE), '{not json');
    expect(readConnection(userData)).toBeUndefined();
    fs.writeFileSync(path.join(userData, SETTINGS_FILE), JSON.stringify({ connection: { mode: 'server', url: 42 } }));
    expect(readConnection(userData)).toBeUndefined();
  });
});

describe('the connection screen', () => {
  const html = (url: string) => Buffer.from(url.slice(url.indexOf(',') + 1), 'base64').toString('utf8');

  it('is a script-free page whose form goes to the choice URL, showing a refused address escaped', () => {
    const first = html(connectionPage());
    expect(first).toContain(`action="${CHOICE_URL}"`);
    expect(first).toContain("default-src 'none'");
    expect(first).not.toMatch(/<script/i);
    expect(first).toMatch(/value="local" checked/);

    const again = html(connectionPage({ error: 'Use https', input: '"><script>alert(1)</script>' }));
    expect(again).toContain('role="alert"');
    expect(again).toMatch(/value="server" checked/);
    expect(again).not.toContain('<script>alert(1)');
    expect(again).toContain('&quot;&gt;&lt;script&gt;');
  });

  it('reads the choice from the form’s navigation, and nothing from any other URL', () => {
    expect(choiceFromUrl(`${CHOICE_URL}?where=local&url=`)).toEqual({ local: true });
    expect(choiceFromUrl(`${CHOICE_URL}?where=server&url=https%3A%2F%2Fteam.example.com`)).toEqual({ server: 'https://team.example.com' });
    expect(choiceFromUrl('https://evil.example/choose?where=server&url=x')).toBeUndefined();
    expect(choiceFromUrl('not a url')).toBeUndefined();
  });
});
