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

/** The console window: isolated, sandboxed, unable to navigate away or open windows of its own. */
export function createMainWindow({ location, preloadPath }: { location: AppLocation; preloadPath: string }): BrowserWindow {
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
      preload: preloadPath,
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
