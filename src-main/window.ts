import { BrowserWindow, shell, type Session } from 'electron';
import { isExternalWebUrl, type AppLocation } from './app-location';

/**
 * The session's security settings: our Content-Security-Policy on every
 * response (the page's meta tag covers file:// too) and no permission
 * (camera, notifications, …) for anyone.
 */
export function secureSession(session: Session, csp: string): void {
  session.webRequest.onHeadersReceived((details, callback) => {
    const headers = Object.fromEntries(
      Object.entries(details.responseHeaders ?? {}).filter(([name]) => name.toLowerCase() !== 'content-security-policy'),
    );
    callback({ responseHeaders: { ...headers, 'Content-Security-Policy': [csp] } });
  });
  session.setPermissionRequestHandler((_webContents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
}

/**
 * The console window: isolated, sandboxed, unable to navigate away or open windows of its own. Without a
 * preload (a remote server's console) the page gets no bridge at all and talks to its server over HTTPS.
 */
export function createMainWindow({ location, preloadPath }: { location: AppLocation; preloadPath: string | undefined }): BrowserWindow {
  const window = new BrowserWindow({
    width: 1280,
    height: 820,
    minWidth: 960,
    minHeight: 600,
    show: false,
    title: 'Agent Directory',
    backgroundColor: '#ffffff',
    autoHideMenuBar: true,
    webPreferences: {
      ...(preloadPath ? { preload: preloadPath } : {}),
      contextIsolation: true,
      nodeIntegration: false,
      sandbox: true,
      webSecurity: true,
      spellcheck: false,
    },
  });

  window.once('ready-to-show', () => window.show());

  window.webContents.on('will-navigate', (event, url) => {
    if (!location.isAppUrl(url)) event.preventDefault();
  });

  window.webContents.setWindowOpenHandler(({ url }) => {
    if (isExternalWebUrl(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });

  void window.loadURL(location.url);
  return window;
}

/**
 * The first-start connection screen (server-choice.ts draws it): a small window whose form "navigates" to
 * CHOICE_URL; `onChoice` gets each such navigation's URL, and no navigation ever leaves the page.
 */
export function createConnectionWindow({ pageUrl, onChoice }: { pageUrl: string; onChoice: (url: string) => void }): BrowserWindow {
  const window = new BrowserWindow({
    width: 620,
    height: 640,
    resizable: true,
    show: false,
    title: 'Connect · Agent Directory',
    backgroundColor: '#f6f7f9',
    autoHideMenuBar: true,
    webPreferences: { contextIsolation: true, nodeIntegration: false, sandbox: true, webSecurity: true, spellcheck: false },
  });
  window.once('ready-to-show', () => window.show());
  window.webContents.on('will-navigate', (event, url) => {
    event.preventDefault();
    onChoice(url);
  });
  window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  void window.loadURL(pageUrl);
  return window;
}
