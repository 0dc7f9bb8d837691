import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, session } from 'electron';
import { contentSecurityPolicy } from '../src-api/console/csp';
import type { RunningServer } from '../src-api/server';
import { startDesktopApi } from './api-server';
import { appLocation, migrationsFolder, remoteLocation, type AppLocation } from './app-location';
import { serveTrpcOverIpc } from './ipc';
import {
  choiceFromUrl,
  connectionPage,
  consoleUrlOf,
  parseServerUrl,
  planStart,
  readConnection,
  saveConnection,
  type StartPlan,
} from './server-choice';
import { createConnectionWindow, createMainWindow, secureSession } from './window';

const here = path.dirname(fileURLToPath(import.meta.url));
const preloadPath = path.join(here, '../preload/index.cjs');
// electron-vite dev serves the renderer with hot reload and says where.
const devServerUrl = process.env.ELECTRON_RENDERER_URL;
const localLocation = appLocation({ devServerUrl, rendererFile: path.join(here, '../renderer/index.html') });

let server: RunningServer | undefined;
let mainWindow: BrowserWindow | undefined;
let ipc: ReturnType<typeof serveTrpcOverIpc> | undefined;
/** What the window shows once chosen: the local console (with the IPC bridge) or a server's web console (without). */
let shown: { location: AppLocation; preload: string | undefined } | undefined;

function openWindow(): void {
  if (!shown) return;
  mainWindow = createMainWindow({ location: shown.location, preloadPath: shown.preload });
  mainWindow.on('closed', () => (mainWindow = undefined));
  ipc?.attachWindow(mainWindow);
}

async function startLocal(): Promise<void> {
  server = await startDesktopApi({
    dataDir: app.getPath('userData'),
    migrationsFolder: migrationsFolder({ isPackaged: app.isPackaged, resourcesPath: process.resourcesPath, appPath: app.getAppPath() }),
  });
  console.log(`Agent Directory API: ${server.apiBaseUrl}`);
  shown = { location: localLocation, preload: preloadPath };
  openWindow();
  ipc = serveTrpcOverIpc({ services: server.services, windows: mainWindow ? [mainWindow] : [], isAppUrl: localLocation.isAppUrl });
}

/** A team's server: no API, database or IPC here; the window is that server's console, signed in with an account there. */
function startRemote(serverUrl: string): void {
  console.log(`Agent Directory server: ${serverUrl}`);
  shown = { location: remoteLocation(consoleUrlOf(serverUrl)), preload: undefined };
  openWindow();
}

async function follow(plan: Exclude<StartPlan, { kind: 'ask' }>): Promise<void> {
  const userData = app.getPath('userData');
  if (plan.kind === 'server') {
    if (plan.remember) saveConnection(userData, { mode: 'server', url: plan.url });
    startRemote(plan.url);
  } else {
    if (plan.remember) saveConnection(userData, { mode: 'local' });
    await startLocal();
  }
}

/** The first-start screen; a refused URL shows it again with the reason, the choice made goes on like a flag. */
function ask(first: { error?: string; input?: string }): void {
  if (first.error) console.error(`Agent Directory: ${first.error}`);
  let deciding = false;
  const connectWindow = createConnectionWindow({
    pageUrl: connectionPage(first),
    onChoice: (url) => {
      const choice = choiceFromUrl(url);
      if (!choice || deciding) return;
      let plan: Exclude<StartPlan, { kind: 'ask' }> = { kind: 'local', remember: true };
      if ('server' in choice) {
        const parsed = parseServerUrl(choice.server);
        if (!parsed.ok) return void connectWindow.loadURL(connectionPage({ error: parsed.error, input: choice.server }));
        plan = { kind: 'server', url: parsed.url, remember: true };
      }
      deciding = true;
      // The main window opens before this one closes, so the app never has no window (which would quit it).
      follow(plan)
        .then(() => connectWindow.close())
        .catch(failed);
    },
  });
}

async function start(): Promise<void> {
  secureSession(
    session.defaultSession,
    // The dev server's hot reload needs its websocket; the built app needs nothing beyond 'self'.
    contentSecurityPolicy(devServerUrl ? { 'connect-src': `'self' ${new URL(devServerUrl).origin.replace(/^http/, 'ws')}` } : {}),
  );
  const plan = planStart(process.argv.slice(1), readConnection(app.getPath('userData')));
  if (plan.kind === 'ask') ask(plan);
  else await follow(plan);
}

function failed(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  console.error('Agent Directory could not start:', error);
  dialog.showErrorBox('Agent Directory could not start', message);
  app.exit(1);
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
    if (shown && BrowserWindow.getAllWindows().length === 0) openWindow();
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

  app.whenReady().then(start).catch(failed);
}
