import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, session } from 'electron';
import { contentSecurityPolicy } from '../src-api/console/csp';
import type { RunningServer } from '../src-api/server';
import { startDesktopApi } from './api-server';
import { appLocation, migrationsFolder } from './app-location';
import { serveTrpcOverIpc } from './ipc';
import { createMainWindow, secureSession } from './window';

const here = path.dirname(fileURLToPath(import.meta.url));
const preloadPath = path.join(here, '../preload/index.cjs');
// electron-vite dev serves the renderer with hot reload and says where.
const devServerUrl = process.env.ELECTRON_RENDERER_URL;
const location = appLocation({ devServerUrl, rendererFile: path.join(here, '../renderer/index.html') });

let server: RunningServer | undefined;
let mainWindow: BrowserWindow | undefined;
let ipc: ReturnType<typeof serveTrpcOverIpc> | undefined;

function openWindow(): void {
  mainWindow = createMainWindow({ location, preloadPath });
  mainWindow.on('closed', () => (mainWindow = undefined));
  ipc?.attachWindow(mainWindow);
}

async function start(): Promise<void> {
  secureSession(
    session.defaultSession,
    // The dev server's hot reload needs its websocket; the built app needs nothing beyond 'self'.
    contentSecurityPolicy(devServerUrl ? { 'connect-src': `'self' ${new URL(devServerUrl).origin.replace(/^http/, 'ws')}` } : {}),
  );
  server = await startDesktopApi({
    dataDir: app.getPath('userData'),
    migrationsFolder: migrationsFolder({ isPackaged: app.isPackaged, resourcesPath: process.resourcesPath, appPath: app.getAppPath() }),
  });
  console.log(`Agent Directory API: ${server.apiBaseUrl}`);
  openWindow();
  ipc = serveTrpcOverIpc({ services: server.services, windows: mainWindow ? [mainWindow] : [], isAppUrl: location.isAppUrl });
}

if (!app.requestSingleInstanceLock()) {
  // Another instance owns the data folder; it gets focused by its 'second-instance' handler.
  app.quit();
} else {
  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  app.on('activate', () => {
    if (server && BrowserWindow.getAllWindows().length === 0) openWindow();
  });

  // Close the API (and with it the database) before the process goes.
  let closing = false;
  app.on('before-quit', (event) => {
    if (!server) return;
    event.preventDefault();
    if (closing) return;
    closing = true;
    server
      .close()
      .catch((error: unknown) => console.error('Closing the API failed:', error))
      .finally(() => {
        server = undefined;
        app.quit();
      });
  });

  app
    .whenReady()
    .then(start)
    .catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      console.error('Agent Directory could not start:', error);
      dialog.showErrorBox('Agent Directory could not start', message);
      app.exit(1);
    });
}
