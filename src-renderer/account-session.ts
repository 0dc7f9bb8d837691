import type { Account } from '../src-api/modules/accounts/accounts.schemas';
import type { ConsoleError } from './shared/errors';

/**
 * Signing in and out with an account: the REST session routes, same origin.
 * They set and clear the HttpOnly session cookie that then opens /trpc; every
 * other call of the console goes through the tRPC client (trpc.ts).
 */
const SESSIONS = '/api/v1/sessions';

export class SessionError extends Error implements ConsoleError {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'SessionError';
  }
}

async function problemOf(response: Response): Promise<SessionError> {
  const body = (await response.json().catch(() => ({}))) as { code?: unknown; detail?: unknown };
  const code = typeof body.code === 'string' ? body.code : `http_${response.status}`;
  const detail = typeof body.detail === 'string' ? body.detail : `The server answered ${response.status}`;
  return new SessionError(code, detail, response.status);
}

/** POST /api/v1/sessions: the cookie comes back with the answer. */
export async function createSession(email: string, password: string): Promise<Account> {
  let response: Response;
  try {
    response = await fetch(SESSIONS, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
  } catch {
    throw new SessionError('network_error', 'The server cannot be reached. Is it running?');
  }
  if (!response.ok) throw await problemOf(response);
  return ((await response.json()) as { account: Account }).account;
}

/** DELETE /api/v1/sessions/current: ends the session on the server and clears the cookie. Never fails loudly. */
export async function endSession(): Promise<void> {
  try {
    await fetch(`${SESSIONS}/current`, { method: 'DELETE', credentials: 'same-origin' });
  } catch {
    // Offline: the cookie expires by itself; the console forgets the session either way.
  }
}
