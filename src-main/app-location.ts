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

/** Only web links leave the app, and only to the system browser. */
export function isExternalWebUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}
