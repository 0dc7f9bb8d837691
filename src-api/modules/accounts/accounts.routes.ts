import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { sessionTokenOf } from '../../http/account-auth';
import type { ApiRoutes } from '../../http/routes';
import { problemSchema } from '../../lib/schemas';
import type { Services } from '../../services';
import {
  accountSchema,
  passwordResetConfirmInputSchema,
  passwordResetInputSchema,
  resetSentSchema,
  sessionSchema,
  signInInputSchema,
  signUpInputSchema,
  tokenInputSchema,
  verificationSentSchema,
} from './accounts.schemas';
import { SESSION_COOKIE } from './sessions';

const bodyProblems = { 400: problemSchema, 413: problemSchema, 415: problemSchema, 429: problemSchema };

/** The session cookie: HttpOnly, SameSite=Lax, whole site, Secure behind an https public URL. */
export function cookieOptions(services: Services, expires?: Date) {
  return { httpOnly: true, sameSite: 'lax' as const, path: '/', secure: services.publicUrl.isHttps(), ...(expires && { expires }) };
}

function clearSessionCookie(services: Services, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(services));
}

/**
 * Sign-up, e-mail verification, password reset and sessions. No CORS: only the site's own pages call these.
 * The routes that send mail spend from the write budget (20 a minute per IP); sign-in has its own limit
 * (10 failures per address or IP in 15 minutes), and token routes need a 256-bit secret.
 */
export const accountsRoutes: ApiRoutes = async (api, { services }) => {
  api.post(
    '/accounts',
    {
      config: { rateLimit: 'writes' },
      schema: {
        tags: ['accounts'],
        summary: 'Create an account',
        description:
          'Starts a sign-up: a verification link is mailed to the address. The answer is 202 whether or not the address ' +
          'has an account already (that account is mailed a notice instead), so nobody learns who is registered. ' +
          'Passwords: 10–200 characters, not a common one (400 `weak_password`); stored with argon2id.',
        body: signUpInputSchema,
        response: { 202: verificationSentSchema, ...bodyProblems },
      },
    },
    async (request, reply) => {
      await services.accounts.signUp(request.body);
      return reply.code(202).send({ status: 'verification_sent' as const });
    },
  );

  api.post(
    '/accounts/verify-email',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Verify an e-mail address',
        description: 'Takes the token of the verification link (single-use, valid 24 h; otherwise 400 `invalid_token`).',
        body: tokenInputSchema,
        response: { 200: accountSchema, ...bodyProblems },
      },
    },
    async (request) => services.accounts.verifyEmail(request.body.token),
  );

  api.post(
    '/accounts/password-reset',
    {
      config: { rateLimit: 'writes' },
      schema: {
        tags: ['accounts'],
        summary: 'Ask for a password reset link',
        description: 'Mails a reset link (valid 1 h) if the address has an account; the answer is 202 either way.',
        body: passwordResetInputSchema,
        response: { 202: resetSentSchema, ...bodyProblems },
      },
    },
    async (request, reply) => {
      await services.accounts.requestPasswordReset(request.body.email);
      return reply.code(202).send({ status: 'reset_sent' as const });
    },
  );

  api.post(
    '/accounts/password-reset/confirm',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Set a new password',
        description: "Takes the reset link's token and the new password; every session of the account ends.",
        body: passwordResetConfirmInputSchema,
        response: { 200: accountSchema, ...bodyProblems },
      },
    },
    async (request) => services.accounts.confirmPasswordReset(request.body.token, request.body.password),
  );

  api.post(
    '/sessions',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Sign in',
        description:
          'Checks the e-mail and password and sets the session cookie (`HttpOnly; SameSite=Lax; Path=/`, `Secure` behind https). ' +
          'A wrong password and an unknown address get the same 401 `invalid_credentials`; an unverified address 403 ' +
          '`email_not_verified`; 10 failures per address or per IP in 15 minutes 429. Sessions end after 7 days idle or 30 days.',
        body: signInInputSchema,
        response: { 201: sessionSchema, 401: problemSchema, 403: problemSchema, ...bodyProblems },
      },
    },
    async (request, reply) => {
      const { account, token, expiresAt } = await services.accounts.signIn(request.body.email, request.body.password, request.ip);
      reply.setCookie(SESSION_COOKIE, token, cookieOptions(services, expiresAt));
      return reply.code(201).send({ account });
    },
  );

  api.delete(
    '/sessions/current',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Sign out',
        description: 'Ends the session of the cookie sent (if any) and clears the cookie.',
        security: [{ sessionCookie: [] }],
        response: { 204: z.null().describe('Signed out'), 429: problemSchema },
      },
    },
    async (request, reply) => {
      const token = sessionTokenOf(request);
      if (token) await services.accounts.signOut(token);
      clearSessionCookie(services, reply);
      return reply.code(204).send(null);
    },
  );
};
