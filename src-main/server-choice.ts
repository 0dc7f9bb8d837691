import fs from 'node:fs';
import path from 'node:path';

/**
 * Which directory the desktop app shows: the one it hosts itself ("this computer"), or a team's server it
 * connects to. Plain TypeScript without electron, so it is tested directly; src-main/index.ts only wires it.
 *
 * The choice comes from `--server URL` (or `--local`), else from the settings file in the app's user data, else
 * the first-start connection screen asks. A choice from a flag or the screen is remembered there.
 */

export type Connection = { mode: 'local' } | { mode: 'server'; url: string };

export type StartPlan =
  | { kind: 'local'; remember: boolean }
  | { kind: 'server'; url: string; remember: boolean }
  /** Ask with the connection screen; `error` and `input` when a `--server` URL was refused. */
  | { kind: 'ask'; error?: string; input?: string };

export const SETTINGS_FILE = 'settings.json';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * A server's base URL as typed (`https://directory.example.com`, `http://127.0.0.1:8787/`), checked and
 * normalized to origin plus path without a trailing slash. https only: the console signs in with a password and
 * carries a session cookie; plain http only to this machine (a server started with `npm run serve`).
 */
export function parseServerUrl(input: string): { ok: true; url: string } | { ok: false; error: string } {
  const text = input.trim();
  if (text === '') return { ok: false, error: 'Enter the server’s address, such as https://directory.example.com.' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, error: `“${text}” is not a URL: write it in full, such as https://directory.example.com.` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, error: `“${text}” is not a web address: use https://.` };
  }
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    return {
      ok: false,
      error: `“${text}” uses http: passwords and sessions would cross the network unencrypted. Use https:// (plain http only for 127.0.0.1 or localhost).`,
    };
  }
  if (url.username || url.password)
    return { ok: false, error: 'Leave the user name and password out of the URL: you sign in on the server.' };
  if (url.search || url.hash) return { ok: false, error: 'Use the server’s base address, without “?” or “#” parts.' };
  return { ok: true, url: `${url.origin}${url.pathname.replace(/\/+$/, '')}` };
}

/** The page the window loads for a server: its web build of the console, which signs in with an account there. */
export function consoleUrlOf(serverUrl: string): string {
  return `${serverUrl}/console/`;
}

/** `--server URL`, `--server=URL` or `--local` among the command-line arguments (the last one wins). */
export function connectionFlag(argv: readonly string[]): { server: string } | { local: true } | undefined {
  let found: { server: string } | { local: true } | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--local') found = { local: true };
    else if (arg === '--server') found = { server: argv[i + 1] ?? '' };
    else if (arg.startsWith('--server=')) found = { server: arg.slice('--server='.length) };
  }
  return found;
}

/** What to do at start: the flag first, then the remembered choice, else ask. */
export function planStart(argv: readonly string[], saved: Connection | undefined): StartPlan {
  const flag = connectionFlag(argv);
  if (flag && 'local' in flag) return { kind: 'local', remember: true };
  if (flag) {
    const parsed = parseServerUrl(flag.server);
    return parsed.ok ? { kind: 'server', url: parsed.url, remember: true } : { kind: 'ask', error: parsed.error, input: flag.server };
  }
  if (saved?.mode === 'local') return { kind: 'local', remember: false };
  if (saved?.mode === 'server') {
    const parsed = parseServerUrl(saved.url);
    if (parsed.ok) return { kind: 'server', url: parsed.url, remember: false };
  }
  return { kind: 'ask' };
}

/** The remembered choice in `<userData>/settings.json`; a missing or unreadable file is no choice. */
export function readConnection(userData: string): Connection | undefined {
  try {
    const settings = JSON.parse(fs.readFileSync(path.join(userData, SETTINGS_FILE), 'utf8')) as { connection?: Connection };
    const connection = settings.connection;
    if (connection?.mode === 'local') return { mode: 'local' };
    if (connection?.mode === 'server' && typeof connection.url === 'string') return { mode: 'server', url: connection.url };
  } catch {
    // No settings yet, or a file we cannot read: the connection screen asks again.
  }
  return undefined;
}

/** Remembers the choice, keeping any other settings; written beside and renamed, so a crash leaves the old file. */
export function saveConnection(userData: string, connection: Connection): void {
  const file = path.join(userData, SETTINGS_FILE);
  let settings: Record<string, unknown> = {};
  try {
    settings = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    // Start a new file.
  }
  fs.mkdirSync(userData, { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify({ ...settings, connection }, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temporary, file);
}

/**
 * The connection screen's form posts here; the main process catches the navigation (`will-navigate`), reads the
 * choice and never lets it leave the app. `.invalid` is reserved (RFC 6761): it resolves nowhere.
 */
export const CHOICE_URL = 'http://connect.agent-directory.invalid/choose';

/** The choice in a navigation to CHOICE_URL, or undefined for any other URL. */
export function choiceFromUrl(url: string): { local: true } | { server: string } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (`${parsed.origin}${parsed.pathname}` !== CHOICE_URL) return undefined;
  return parsed.searchParams.get('where') === 'server' ? { server: parsed.searchParams.get('url') ?? '' } : { local: true };
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);

/**
 * The first-start connection screen: one small HTML page without script (a form and its CSP), loaded as a data:
 * URL, so it needs neither a preload nor a build step.
 */
export function connectionPage({ error, input }: { error?: string; input?: string } = {}): string {
  const serverChecked = error !== undefined || input !== undefined;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; form-action ${new URL(CHOICE_URL).origin}">
<title>Connect · Agent Directory</title>
<style>
  body { margin: 0; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2937; background: #f6f7f9; }
  main { max-width: 480px; margin: 72px auto; padding: 28px 32px; background: #fff; border: 1px solid #e5e7eb; border-radius: 10px; }
  h1 { margin: 0 0 4px; font-size: 20px; }
  p.lead { margin: 0 0 20px; color: #4b5563; }
  fieldset { border: 0; margin: 0; padding: 0; }
  legend { font-weight: 600; margin-bottom: 8px; }
  label.choice { display: block; padding: 12px 14px; border: 1px solid #d1d5db; border-radius: 8px; margin-bottom: 10px; cursor: pointer; }
  label.choice:has(input:checked) { border-color: #1f5bd1; background: #f0f5ff; }
  .hint { display: block; margin-left: 24px; color: #4b5563; font-size: 13px; }
  input[type=url] { box-sizing: border-box; width: calc(100% - 24px); margin: 8px 0 0 24px; padding: 7px 10px; font: inherit; border: 1px solid #9ca3af; border-radius: 6px; }
  :focus-visible { outline: 2px solid #1f5bd1; outline-offset: 2px; }
  .error { margin: 0 0 16px; padding: 10px 12px; border-radius: 6px; background: #fdecee; color: #9f1c33; }
  button { margin-top: 8px; padding: 8px 18px; font: inherit; font-weight: 600; color: #fff; background: #1f5bd1; border: 0; border-radius: 6px; cursor: pointer; }
</style>
</head>
<body>
<main>
  <h1>Agent Directory</h1>
  <p class="lead">Which directory should this app show? You can change it later with <code>--local</code> or <code>--server URL</code>.</p>
  ${error ? `<p class="error" role="alert" id="connect-error">${escapeHtml(error)}</p>` : ''}
  <form method="get" action="${CHOICE_URL}">
    <fieldset>
      <legend>Connect to</legend>
      <label class="choice"><input type="radio" name="where" value="local"${serverChecked ? '' : ' checked'}> This computer
        <span class="hint">The app keeps its own directory here and serves it; you are its moderator.</span></label>
      <label class="choice"><input type="radio" name="where" value="server"${serverChecked ? ' checked' : ''}> A server
        <span class="hint">Your team’s directory: sign in with your account there.</span>
        <input type="url" name="url" aria-label="Server URL" placeholder="https://directory.example.com" value="${escapeHtml(input ?? '')}"${error ? ' aria-describedby="connect-error" aria-invalid="true"' : ''}></label>
    </fieldset>
    <button type="submit">Continue</button>
  </form>
</main>
</body>
</html>`;
  return `data:text/html;charset=utf-8;base64,${Buffer.from(html, 'utf8').toString('base64')}`;
}
