import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Where the console is loaded from, and which URLs count as "the app" for navigation and IPC. */
export interface AppLocation {
  /** The URL the window loads. */
  url: string;
  /** True for URLs of the console itself: the same file (built app) or the same origin (dev server). */
  isAppUrl(url: string): boolean;
}

export function appLocation({ devServerUrl, rendererFile }: { devServerUrl?: string; rendererFile: string }): AppLocation {
  const base = new URL(devServerUrl ?? pathToFileURL(rendererFile).href);
  return {
    url: base.href,
    isAppUrl(candidate) {
      let parsed: URL;
      try {
        parsed = new URL(candidate);
      } catch {
        return false;
      }
      if (base.protocol === 'file:') return parsed.protocol === 'file:' && parsed.pathname === base.pathname;
      return parsed.origin === base.origin;
    },
  };
}

/** A team's server: the window shows its web console, and "the app" is everything on that origin (console, dashboard, docs). */
export function remoteLocation(consoleUrl: string): AppLocation {
  const base = new URL(consoleUrl);
  return {
    url: base.href,
    isAppUrl(candidate) {
      try {
        return new URL(candidate).origin === base.origin;
      } catch {
        return false;
      }
    },
  };
}

/** Only web links leave the app, and only to the system browser. */
export function isExternalWebUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

/** Where electron-builder puts the migrations in a packaged app: `extraResources` … `to: migrations` in electron-builder.yml. */
export const PACKAGED_MIGRATIONS = 'migrations';

/**
 * The migrations folder: beside the asar in a packaged app (process.resourcesPath,
 * copied there by electron-builder), in the project's resources/ otherwise.
 */
export function migrationsFolder({
  isPackaged,
  resourcesPath,
  appPath,
}: {
  isPackaged: boolean;
  resourcesPath: string;
  appPath: string;
}): string {
  return isPackaged ? path.join(resourcesPath, PACKAGED_MIGRATIONS) : path.join(appPath, 'resources', 'migrations');
}
