import { expect } from 'vitest';
import { tokenFromMail, type SmtpReceiver } from './smtp-receiver';
import type { TestServer } from './test-server';

export const GOOD_PASSWORD = 'correct horse battery staple';

/** The `name=value` part of the session cookie set by a response. */
export function sessionCookieOf(response: Response): string {
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith('agentdir_session='));
  if (!cookie) throw new Error(`no session cookie in ${response.headers.getSetCookie().join(' | ')}`);
  return cookie.split(';')[0]!;
}

/** Signs up through the API, follows the verification link from the received mail, signs in; returns the cookie. */
export async function signUpAndSignIn(
  server: TestServer,
  smtp: SmtpReceiver,
  email: string,
  options: { name?: string; password?: string } = {},
): Promise<{ cookie: string; account: { id: string; email: string } }> {
  const password = options.password ?? GOOD_PASSWORD;
  const signUp = await server.post('/accounts', { email, password, name: options.name ?? email.split('@')[0] });
  expect(signUp.status).toBe(202);
  const mail = await smtp.waitFor((m) => m.to.includes(email.toLowerCase()) && /confirm your e-mail/i.test(m.subject));
  const verify = await server.post('/accounts/verify-email', { token: tokenFromMail(mail, '/dashboard/verify-email') });
  expect(verify.status).toBe(200);
  const session = await server.post('/sessions', { email, password });
  expect(session.status).toBe(201);
  const body = (await session.json()) as { account: { id: string; email: string } };
  return { cookie: sessionCookieOf(session), account: body.account };
}

/** fetch against the API with a cookie (and, for unsafe methods, JSON). */
export function withCookie(server: TestServer, cookie: string) {
  return (pathAndQuery: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    server.api(pathAndQuery, {
      method: init.method ?? 'GET',
      headers: {
        cookie,
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
        ...init.headers,
      },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    });
}
