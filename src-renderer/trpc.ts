import { createTRPCClient, httpBatchLink, TRPCClientError, type TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import { ipcLink } from 'trpc-electron/renderer';
import type { TrpcErrorData } from '../src-api/trpc/init';
import type { AppRouter } from '../src-api/trpc/root';
import type { ConsoleError } from './shared/errors';

/**
 * The console's one way to the API. In Electron the preload exposes
 * `electronTRPC` and calls go over IPC (no network, no token); in a browser
 * they go to /trpc on the serving origin with the admin token.
 */
export const isDesktop = typeof window !== 'undefined' && window.electronTRPC !== undefined;

let authToken: string | null = null;

/** The session store hands the admin token over here; only the HTTP link sends it. */
export function setAuthToken(token: string | null): void {
  authToken = token;
}

function transportLink(): TRPCLink<AppRouter> {
  if (isDesktop) return ipcLink<AppRouter>();
  return httpBatchLink<AppRouter>({
    url: `${window.location.origin}/trpc`,
    headers: () => (authToken ? { Authorization: `Bearer ${authToken}` } : {}),
  });
}

/**
 * Answers that mean "sign in again": no or an ended session, a wrong token, or an account whose
 * console role was taken away meanwhile.
 */
export function endsSession(code: string | undefined): boolean {
  return code === 'unauthorized' || code === 'console_role_required';
}

let onSessionEnded: (() => void) | undefined;
let onRolesChanged: (() => void) | undefined;

/** Called whenever the server refuses the session, whichever screen asked: the router sends the user to sign in. */
export function whenSessionEnds(handler: () => void): void {
  onSessionEnded = handler;
}

/** Called when the server says the caller is no admin (any more): the session store reads its roles again. */
export function whenRolesChange(handler: () => void): void {
  onRolesChanged = handler;
}

/** Watches every answer for a refused session, so no screen has to (and none shows a bare "no console role" error). */
const sessionWatchLink: TRPCLink<AppRouter> =
  () =>
  ({ op, next }) =>
    observable((observer) =>
      next(op).subscribe({
        next: (value) => observer.next(value),
        error: (error) => {
          const { code } = toConsoleError(error);
          if (endsSession(code)) onSessionEnded?.();
          else if (code === 'admin_role_required') onRolesChanged?.();
          observer.error(error);
        },
        complete: () => observer.complete(),
      }),
    );

export const trpc = createTRPCClient<AppRouter>({ links: [sessionWatchLink, transportLink()] });

export type { ConsoleError };

interface ProblemBody {
  code?: unknown;
  detail?: unknown;
  status?: unknown;
}

export function toConsoleError(error: unknown): ConsoleError {
  if (error instanceof TRPCClientError) {
    const data = error.data as Partial<TrpcErrorData> | undefined;
    if (data?.code) return { code: data.code, message: error.message, ...(data.httpStatus ? { status: data.httpStatus } : {}) };
    // /trpc refuses a missing or wrong token before tRPC runs: the body is a problem, not a tRPC error.
    const meta = error.meta as { response?: { status?: number }; responseJSON?: ProblemBody } | undefined;
    const problem = meta?.responseJSON;
    if (problem && typeof problem.code === 'string') {
      return {
        code: problem.code,
        message: typeof problem.detail === 'string' ? problem.detail : error.message,
        ...(typeof problem.status === 'number' ? { status: problem.status } : {}),
      };
    }
    if (meta?.response?.status === 401) return { code: 'unauthorized', message: 'The admin token is not valid', status: 401 };
    if (error.cause instanceof TypeError || /fetch/i.test(error.message)) {
      return { code: 'network_error', message: 'The server cannot be reached. Is it running?' };
    }
    return { code: 'unexpected_response', message: error.message };
  }
  return { code: 'client_error', message: error instanceof Error ? error.message : String(error) };
}
