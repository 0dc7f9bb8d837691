import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ApiRoutes } from '../../http/routes';
import { AppError } from '../../errors';
import { problemSchema } from '../../lib/schemas';
import {
  confirmationSentSchema,
  newsletterInputSchema,
  newsletterTokenInputSchema,
  oneClickBodySchema,
  oneClickQuerySchema,
  subscriptionSchema,
} from './newsletter.schemas';

const bodyProblems = { 400: problemSchema, 413: problemSchema, 415: problemSchema };

/**
 * Newsletter sign-up with double opt-in. Only the sign-up sends mail, so only it spends the write
 * budget (20 a minute per IP); the token routes need a 256-bit secret, and one-click unsubscribes
 * come from a few mail providers' servers on behalf of many people.
 */
export const newsletterRoutes: ApiRoutes = async (api, { services }) => {
  api.post(
    '/newsletter',
    {
      config: { rateLimit: 'writes' },
      schema: {
        tags: ['newsletter'],
        summary: 'Subscribe to the newsletter',
        description:
          'Mails a confirmation link to the address; it is subscribed once the link is followed (`POST /newsletter/confirm`). ' +
          'The answer is 202 with the same body for every valid address, whether new, waiting for confirmation or ' +
          'subscribed already (that one is mailed a notice instead), so it tells nobody who is on the list. ' +
          'An address is mailed at most 3 times an hour, whoever asks; further requests get the same answer and no mail.',
        body: newsletterInputSchema,
        response: { 202: confirmationSentSchema.describe('A mail is on its way to the address'), ...bodyProblems, 429: problemSchema },
      },
    },
    async (request, reply) => {
      await services.newsletter.requestSubscription(request.body.email);
      return reply.code(202).send({ email: request.body.email, status: 'confirmation_sent' });
    },
  );

  api.post(
    '/newsletter/confirm',
    {
      schema: {
        tags: ['newsletter'],
        summary: 'Confirm a newsletter subscription',
        description:
          'Takes the token of the confirmation link (single-use, valid 48 h): the address is subscribed. ' +
          'An unknown, expired or used token is 400 `invalid_token`.',
        body: newsletterTokenInputSchema,
        response: { 200: subscriptionSchema.describe('The address is subscribed'), ...bodyProblems },
      },
    },
    async (request) => services.newsletter.confirm(request.body.token),
  );

  api.post(
    '/newsletter/unsubscribe',
    {
      schema: {
        tags: ['newsletter'],
        summary: 'Unsubscribe from the newsletter',
        description:
          'Takes the token of the unsubscribe link that every newsletter mail carries (valid a year, any number of times): ' +
          'the address leaves the list. An unknown or expired token is 400 `invalid_token`.',
        body: newsletterTokenInputSchema,
        response: { 200: subscriptionSchema.describe('The address is unsubscribed'), ...bodyProblems },
      },
    },
    async (request) => services.newsletter.unsubscribe(request.body.token),
  );

  // The RFC 8058 one-click URL of the List-Unsubscribe header: mail clients POST a form to it.
  await api.register(async (scope) => {
    const oneClick = scope.withTypeProvider<ZodTypeProvider>();
    oneClick.addContentTypeParser(
      ['application/x-www-form-urlencoded', 'multipart/form-data'],
      { parseAs: 'string' },
      (request, body, done) => done(null, formFields(request.headers['content-type'] ?? '', body as string)),
    );
    oneClick.post(
      '/newsletter/unsubscribe/one-click',
      {
        schema: {
          tags: ['newsletter'],
          summary: 'Unsubscribe with one click (RFC 8058)',
          description:
            'The URL of the `List-Unsubscribe` header of every newsletter mail (with `List-Unsubscribe-Post: List-Unsubscribe=One-Click`). ' +
            'A mail client POSTs `List-Unsubscribe=One-Click` as a form; the token is in the URL. Same effect as `POST /newsletter/unsubscribe`.',
          consumes: ['application/x-www-form-urlencoded', 'multipart/form-data'],
          querystring: oneClickQuerySchema,
          body: oneClickBodySchema,
          response: { 200: subscriptionSchema.describe('The address is unsubscribed'), ...bodyProblems },
        },
      },
      async (request) => services.newsletter.unsubscribe(request.query.token),
    );
  });
};

/** The fields of a small form, urlencoded or multipart (RFC 8058 allows both); the first value of a name wins. */
function formFields(contentType: string, body: string): Record<string, string> {
  const fields: Record<string, string> = {};
  if (/^application\/x-www-form-urlencoded/i.test(contentType)) {
    for (const [name, value] of new URLSearchParams(body)) fields[name] ??= value;
    return fields;
  }
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!boundary) throw new AppError(400, 'malformed_form', 'Malformed form', 'A multipart body needs a boundary');
  for (const part of body.split(`--${boundary}`)) {
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) continue;
    const name = /content-disposition:[^\r\n]*\bname="([^"]*)"/i.exec(part.slice(0, split))?.[1];
    if (name !== undefined) fields[name] ??= part.slice(split + 4).replace(/\r\n$/, '');
  }
  return fields;
}
