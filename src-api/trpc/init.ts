import { initTRPC, TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { z, ZodError } from 'zod';
import { AppError, ForbiddenError, UnauthorizedError, type FieldError } from '../errors';
import type { Account } from '../modules/accounts/accounts.schemas';
import type { AccountRole } from '../modules/accounts/accounts.table';
import type { Services } from '../services';

/** How the caller of the console's API proved who it is. */
export type ConsoleAuthVia = 'account' | 'admin-token' | 'desktop';

/**
 * Who calls the console's API, as the transport established it: an account
 * with a role (its session cookie), the admin token (automation, audited as
 * "admin-token"), or the desktop app's own window over IPC.
 */
export interface ConsolePrincipal {
  /** The audit log's "who": "<email> (<account id>)", "admin-token" or "desktop-moderator". */
  actor: string;
  via: ConsoleAuthVia;
  roles: readonly AccountRole[];
  account: Account | null;
}

export const ADMIN_TOKEN_ACTOR = 'admin-token';

/** The admin token stands for automation with every right. */
export const ADMIN_TOKEN_PRINCIPAL: ConsolePrincipal = { actor: ADMIN_TOKEN_ACTOR, via: 'admin-token', roles: ['admin'], account: null };

/**
 * What every procedure gets. `actor` names who is calling, for the audit log;
 * null (with no principal) when the caller could not be authenticated.
 */
export interface TrpcContext {
  services: Services;
  actor: string | null;
  principal: ConsolePrincipal | null;
  /** Where unexpected (5xx) errors are reported; each transport passes its own logger. */
  logError: (error: unknown, path: string) => void;
}

export function createTrpcContext({
  services,
  principal,
  logError,
}: {
  services: Services;
  principal: ConsolePrincipal | null;
  logError: TrpcContext['logError'];
}): TrpcContext {
  return { services, actor: principal?.actor ?? null, principal, logError };
}

/** The `data` of every tRPC error, on both transports. */
export interface TrpcErrorData {
  /** Our stable snake_case code, the same vocabulary as the REST problems (`not_found`, `validation_failed`, …). */
  code: string;
  /** tRPC's own code, e.g. NOT_FOUND. */
  trpcCode: TRPC_ERROR_CODE_KEY;
  httpStatus: number;
  title: string;
  path?: string;
  /** Offending fields as JSON pointers, like the REST API's validation problems. */
  errors?: FieldError[];
  /** zod's flattened error when the input did not validate. */
  zodError: { formErrors: string[]; fieldErrors: Record<string, string[] | undefined> } | null;
}

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  408: 'TIMEOUT',
  409: 'CONFLICT',
  412: 'PRECONDITION_FAILED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
};

const STATUS_BY_TRPC_CODE: Partial<Record<TRPC_ERROR_CODE_KEY, number>> = {
  ...Object.fromEntries(Object.entries(TRPC_CODE_BY_STATUS).map(([status, code]) => [code, Number(status)])),
  PARSE_ERROR: 400,
  CLIENT_CLOSED_REQUEST: 499,
};

/** Our codes for errors tRPC raises itself (unknown procedure, unparsable request, …). */
const SNAKE_CODE_BY_TRPC_CODE: Partial<Record<TRPC_ERROR_CODE_KEY, { code: string; title: string }>> = {
  PARSE_ERROR: { code: 'malformed_json', title: 'Malformed JSON' },
  BAD_REQUEST: { code: 'bad_request', title: 'Bad request' },
  UNAUTHORIZED: { code: 'unauthorized', title: 'Unauthorized' },
  FORBIDDEN: { code: 'forbidden', title: 'Forbidden' },
  NOT_FOUND: { code: 'not_found', title: 'Not found' },
  METHOD_NOT_SUPPORTED: { code: 'method_not_allowed', title: 'Method not allowed' },
  TIMEOUT: { code: 'timeout', title: 'Timeout' },
  CONFLICT: { code: 'conflict', title: 'Conflict' },
  PRECONDITION_FAILED: { code: 'precondition_failed', title: 'Precondition failed' },
  PAYLOAD_TOO_LARGE: { code: 'payload_too_large', title: 'Payload too large' },
  UNSUPPORTED_MEDIA_TYPE: { code: 'unsupported_media_type', title: 'Unsupported media type' },
  UNPROCESSABLE_CONTENT: { code: 'unprocessable_content', title: 'Unprocessable content' },
  TOO_MANY_REQUESTS: { code: 'rate_limited', title: 'Too many requests' },
  CLIENT_CLOSED_REQUEST: { code: 'client_closed_request', title: 'Client closed request' },
};

const INTERNAL = { code: 'internal_error', title: 'Internal error', detail: 'Something went wrong on our side; it has been logged' };

/** The tRPC code for an HTTP status: the one place AppError statuses meet tRPC. */
export function trpcCodeForStatus(status: number): TRPC_ERROR_CODE_KEY {
  return TRPC_CODE_BY_STATUS[status] ?? (status >= 400 && status < 500 ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR');
}

/** What a client sees of any error: AppErrors keep their status, code and detail; 5xx details never leave. */
function describe(error: TRPCError): Omit<TrpcErrorData, 'path' | 'zodError'> & { message: string } {
  const cause = error.cause;
  if (cause instanceof AppError) {
    const trpcCode = trpcCodeForStatus(cause.status);
    if (trpcCode === 'INTERNAL_SERVER_ERROR') {
      return { code: INTERNAL.code, trpcCode, httpStatus: 500, title: INTERNAL.title, message: INTERNAL.detail };
    }
    return {
      code: cause.code,
      trpcCode,
      httpStatus: cause.status,
      title: cause.title,
      message: cause.detail,
      ...(cause.extra.errors ? { errors: cause.extra.errors } : {}),
    };
  }
  if (cause instanceof ZodError) {
    const errors = cause.issues.map((issue) => ({
      pointer: issue.path.length ? `/${issue.path.map((part) => String(part)).join('/')}` : '/',
      detail: issue.message,
    }));
    return {
      code: 'validation_failed',
      trpcCode: 'BAD_REQUEST',
      httpStatus: 400,
      title: 'Validation failed',
      message: `The input is not valid: ${errors.map((e) => `${e.pointer} ${e.detail}`).join('; ')}`,
      errors,
    };
  }
  const known = SNAKE_CODE_BY_TRPC_CODE[error.code];
  if (!known) {
    return { code: INTERNAL.code, trpcCode: 'INTERNAL_SERVER_ERROR', httpStatus: 500, title: INTERNAL.title, message: INTERNAL.detail };
  }
  return {
    ...known,
    trpcCode: error.code,
    httpStatus: STATUS_BY_TRPC_CODE[error.code] ?? 400,
    message: error.message,
  };
}

const t = initTRPC.context<TrpcContext>().create({
  // Stacks never reach a client, whatever NODE_ENV says.
  isDev: false,
  errorFormatter({ shape, error }) {
    const { message, ...described } = describe(error);
    const zodError = error.cause instanceof ZodError ? z.flattenError(error.cause) : null;
    const data: TrpcErrorData = { ...described, zodError, ...(shape.data.path !== undefined ? { path: shape.data.path } : {}) };
    return { message, code: TRPC_ERROR_CODES_BY_KEY[described.trpcCode], data };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Reports errors the client cannot be blamed for; expected ones (4xx) are the caller's business. */
const reportServerErrors = t.middleware(async ({ ctx, path, next }) => {
  const result = await next();
  if (!result.ok && describe(result.error).httpStatus >= 500) ctx.logError(result.error.cause ?? result.error, path);
  return result;
});

/**
 * Every console procedure: the transport has authenticated the caller (a
 * moderator, an admin, the admin token or the desktop window), and the actor is known.
 */
export const adminProcedure = t.procedure.use(reportServerErrors).use(({ ctx, next }) => {
  if (!ctx.actor || !ctx.principal) throw new UnauthorizedError();
  return next({ ctx: { ...ctx, actor: ctx.actor, principal: ctx.principal } });
});

/** What only the `admin` role may do: roles and accounts, every account's keys and endpoints, the newsletter export. */
export const adminRoleProcedure = adminProcedure.use(({ ctx, next }) => {
  if (!ctx.principal.roles.includes('admin')) throw new ForbiddenError('Only an admin may do this', 'admin_role_required');
  return next();
});
