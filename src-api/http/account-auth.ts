import type { FastifyReply, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../errors';
import type { Account } from '../modules/accounts/accounts.schemas';
import { SESSION_COOKIE } from '../modules/accounts/sessions';
import type { Services } from '../services';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in account on /me routes (set by requireAccount). */
    account?: Account;
    /** How it signed in: the session cookie or one of its API keys. */
    accountVia?: 'session' | 'key';
  }
}

/** OpenAPI `security` of the routes that take an account: its session cookie or its own API key. */
export const ACCOUNT_SECURITY: { [scheme: string]: string[] }[] = [{ sessionCookie: [] }, { bearerKey: [] }];

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a cookie-authenticated request may change anything: a browser names
 * the page's origin in `Origin` (and `Sec-Fetch-Site`) on unsafe requests, so
 * one from another site is refused (CSRF), on top of SameSite=Lax.
 */
export function isCrossSiteRequest(request: FastifyRequest, publicUrl: string): boolean {
  if (request.headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  const allowed = new Set([new URL(publicUrl).origin, `${request.protocol}://${request.host}`]);
  return !allowed.has(origin);
}

/**
 * The session cookie's value. Cookies are parsed here, on the requests that ask (app.ts registers
 * @fastify/cookie without its parsing hook, which cost every request a parse or two allocations).
 */
export function sessionTokenOf(request: FastifyRequest): string | undefined {
  if (!request.cookies) {
    const header = request.headers.cookie;
    request.cookies = header ? request.server.parseCookie(header) : {};
  }
  const value = request.cookies[SESSION_COOKIE];
  return value ? value : undefined;
}

/**
 * A preHandler for /me routes: the account from an API key of the account
 * (already checked by the API's key hook) or from the session cookie.
 */
export function requireAccount(services: Services) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    if (request.apiKeyId !== undefined) {
      const accountId = await services.keys.accountOf(request.apiKeyId);
      const row = accountId ? await services.accounts.find(accountId) : undefined;
      if (!row || row.disabledAt)
        throw new UnauthorizedError('This API key belongs to no account; /me takes a key issued from the dashboard, or the session cookie');
      request.account = await services.accounts.get(row.id);
      request.accountVia = 'key';
      return;
    }
    const token = sessionTokenOf(request);
    const account = token ? await services.accounts.authenticateSession(token) : undefined;
    if (!account)
      throw new UnauthorizedError(
        'Sign in first (POST /api/v1/sessions), or send an API key of the account as "Authorization: Bearer adk_…"',
      );
    if (!SAFE_METHODS.has(request.method) && isCrossSiteRequest(request, services.publicUrl.get())) {
      throw new ForbiddenError('Requests that change an account must come from the site itself', 'cross_site_request');
    }
    request.account = account;
    request.accountVia = 'session';
  };
}

/**
 * The account a public write (review, submission, claim) belongs to: one of
 * its keys, or its session cookie when the request comes from the site itself
 * (a cross-site form must not write in someone's name); null when anonymous.
 */
export async function writerAccountId(services: Services, request: FastifyRequest): Promise<string | null> {
  if (request.apiKeyId !== undefined) return await services.keys.accountOf(request.apiKeyId);
  const token = sessionTokenOf(request);
  if (!token || isCrossSiteRequest(request, services.publicUrl.get())) return null;
  return (await services.accounts.authenticateSession(token))?.id ?? null;
}

/** The account set by requireAccount (for handlers behind it). */
export function accountOf(request: FastifyRequest): Account {
  if (!request.account) throw new UnauthorizedError('Sign in first');
  return request.account;
}
