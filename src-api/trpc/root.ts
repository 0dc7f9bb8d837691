import { router } from './init';
import { agentsRouter } from './routers/agents.router';
import { auditRouter } from './routers/audit.router';
import { keysRouter } from './routers/keys.router';
import { systemRouter } from './routers/system.router';

/**
 * The console's API, one router per domain; both transports (HTTP /trpc in
 * serve mode, IPC in Electron) serve this same object. Add a domain with one line.
 */
export const appRouter = router({
  system: systemRouter,
  agents: agentsRouter,
  audit: auditRouter,
  keys: keysRouter,
});

export type AppRouter = typeof appRouter;
