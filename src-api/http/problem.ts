import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, type FieldError } from '../errors';
import { drainUnreadBody } from './unread-body';

/** The body of every error response (RFC 9457). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
}

const PROBLEM_TYPE_BASE = 'https://agent-directory.dev/problems/';

/** Titles and codes of the framework's own 4xx errors, by HTTP status. */
const GENERIC_CLIENT_ERRORS: Record<number, { code: string; title: string }> = {
  400: { code: 'bad_request', title: 'Bad request' },
  401: { code: 'unauthorized', title: 'Unauthorized' },
  403: { code: 'forbidden', title: 'Forbidden' },
  404: { code: 'not_found', title: 'Not found' },
  405: { code: 'method_not_allowed', title: 'Method not allowed' },
  406: { code: 'not_acceptable', title: 'Not acceptable' },
  413: { code: 'payload_too_large', title: 'Payload too large' },
  414: { code: 'uri_too_long', title: 'URI too long' },
  415: { code: 'unsupported_media_type', title: 'Unsupported media type' },
  431: { code: 'headers_too_large', title: 'Request header fields too large' },
};

export function problem(status: number, code: string, title: string, detail: string, errors?: FieldError[]): Problem {
  return { type: `${PROBLEM_TYPE_BASE}${code}`, title, status, detail, code, ...(errors ? { errors } : {}) };
}

/** Turns anything thrown while handling a request into a problem; 5xx details never reach the client. */
export function toProblem(error: unknown): Problem {
  if (error instanceof AppError) {
    return problem(error.status, error.code, error.title, error.detail, error.extra.errors);
  }
  const fastifyError = error as FastifyError;
  if (hasZodFastifySchemaValidationErrors(fastifyError)) {
    const context = fastifyError.validationContext ?? 'body';
    const errors = fastifyError.validation.map((issue) => ({
      pointer: issue.instancePath || '/',
      detail: describeIssue(issue.keyword, issue.params as { keys?: string[] }, issue.message ?? 'is invalid'),
    }));
    const where = context === 'body' ? 'request body' : context === 'querystring' ? 'query string' : context;
    return problem(
      400,
      'validation_failed',
      'Validation failed',
      `The ${where} is not valid: ${errors.map((e) => `${e.pointer} ${e.detail}`).join('; ')}`,
      errors,
    );
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      if (fastifyError.statusCode === 415) {
        return problem(
          415,
          'unsupported_media_type',
          'Unsupported media type',
          'Send the request body as JSON with "Content-Type: application/json"',
        );
      }
      break;
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem(413, 'payload_too_large', 'Payload too large', 'The request body is larger than 1 MiB');
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const generic = GENERIC_CLIENT_ERRORS[status] ?? { code: 'bad_request', title: 'Bad request' };
    return problem(status, generic.code, generic.title, safeClientMessage(fastifyError.message, generic.title));
  }
  return problem(500, 'internal_error', 'Internal error', 'Something went wrong on our side; it has been logged');
}

function describeIssue(code: string, params: { keys?: string[] }, message: string): string {
  if (code === 'unrecognized_keys' && params.keys) return `unknown field(s): ${params.keys.join(', ')}`;
  return message;
}

/** Framework messages are fine to show, but never anything that looks like a path or a stack. */
function safeClientMessage(message: string | undefined, fallback: string): string {
  if (!message || /[\\/]\w+[\\/]|\bat\s+\S+\s+\(/.test(message)) return fallback;
  return message.slice(0, 300);
}

export function sendProblem(reply: FastifyReply, body: Problem): FastifyReply {
  drainUnreadBody(reply);
  return reply.status(body.status).type('application/problem+json; charset=utf-8').send(body);
}

export function logIfServerError(request: FastifyRequest, error: unknown, body: Problem): void {
  if (body.status >= 500) request.log.error({ err: error }, 'request failed');
}
