import type { BrowserWindow } from 'electron';
import { createIPCHandler } from 'trpc-electron/main';
import type { Services } from '../src-api/services';
import { createTrpcContext, type ConsolePrincipal } from '../src-api/trpc/init';
import { appRouter } from '../src-api/trpc/root';

export const DESKTOP_ACTOR = 'desktop-moderator';

/** The person at the desktop app owns its local directory: every role. */
const DESKTOP_PRINCIPAL: ConsolePrincipal = { actor: DESKTOP_ACTOR, via: 'desktop', roles: ['moderator', 'admin'], account: null };

/**
 * The console's tRPC router over IPC: the same router as /trpc in serve
 * mode, without a network. Only frames showing the app itself get an actor;
 * anything else that manages to send on the channel is refused (401).
 */
export function serveTrpcOverIpc({
  services,
  windows,
  isAppUrl,
}: {
  services: Services;
  windows: BrowserWindow[];
  isAppUrl: (url: string) => boolean;
}) {
  return createIPCHandler({
    router: appRouter,
    windows,
    createContext: async ({ event }) =>
      createTrpcContext({
        services,
        principal: isAppUrl(event.senderFrame?.url ?? '') ? DESKTOP_PRINCIPAL : null,
        logError: (error, path) => console.error(`tRPC ${path} failed:`, error),
      }),
  });
}
