/**
 * The errors services throw. Each carries what a client needs (HTTP status,
 * a stable snake_case code, a human title and detail); each transport maps
 * them once: REST to RFC 9457 problem details, tRPC to TRPCError.
 */
export interface FieldError {
  /** JSON pointer to the offending field, e.g. "/rating". */
  pointer: string;
  detail: string;
}

export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    detail: string,
    readonly extra: { errors?: FieldError[]; retryAfterSeconds?: number } = {},
  ) {
    super(detail);
  }

  get detail(): string {
    return this.message;
  }
}

export class ValidationError extends AppError {
  constructor(detail: string, errors: FieldError[] = []) {
    super(400, 'validation_failed', 'Validation failed', detail, { errors });
  }
}

export class NotFoundError extends AppError {
  constructor(what: string, id?: string) {
    super(404, 'not_found', 'Not found', id === undefined ? `${what} not found` : `${what} "${id}" not found`);
  }
}

export class ConflictError extends AppError {
  constructor(detail: string) {
    super(409, 'conflict', 'Conflict', detail);
  }
}

/** Someone else changed the record since the caller read it (optimistic concurrency). */
export class StaleVersionError extends AppError {
  constructor(what: string, id: string) {
    super(409, 'stale_version', 'Changed by someone else', `${what} "${id}" was changed by someone else; reload it and try again`);
  }
}

export class VerificationFailedError extends AppError {
  constructor(detail: string) {
    super(422, 'verification_failed', 'Verification failed', detail);
  }
}

/** A per-client quota of contract section 3 (pending claims, open reports): the state must change first. */
export class QuotaExceededError extends AppError {
  constructor(detail: string, code = 'quota_exceeded') {
    super(409, code, 'Quota exceeded', detail);
  }
}

export class TooManyIdsError extends AppError {
  constructor(count: number, max: number) {
    super(400, 'too_many_ids', 'Too many ids', `At most ${max} ids per request; got ${count}`);
  }
}

export class InvalidApiKeyError extends AppError {
  constructor() {
    super(401, 'invalid_api_key', 'Invalid API key', 'The API key is unknown or has been revoked');
  }
}

export class UnauthorizedError extends AppError {
  constructor(detail = 'A valid admin token is required') {
    super(401, 'unauthorized', 'Unauthorized', detail);
  }
}

export class RateLimitedError extends AppError {
  constructor(
    retryAfterSeconds: number,
    /** The limit that refused the request (`reads`, `writes`, `sign-in`, …), for /metrics. */
    readonly policy: string,
  ) {
    super(429, 'rate_limited', 'Too many requests', `Rate limit "${policy}" exceeded; retry in ${retryAfterSeconds} s`, {
      retryAfterSeconds,
    });
  }
}

/** A backup could not be written (`cli backup`, the console's "back up now"). */
export class BackupFailedError extends AppError {
  constructor(detail: string) {
    super(422, 'backup_failed', 'Backup failed', detail);
  }
}

/** A file given to `cli restore` that is not a sound backup of this application. */
export class InvalidBackupError extends AppError {
  constructor(detail: string) {
    super(422, 'invalid_backup', 'Not a backup of this directory', detail);
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

export class ForbiddenError extends AppError {
  constructor(detail: string, code = 'forbidden') {
    super(403, code, 'Forbidden', detail);
  }
}

export class WeakPasswordError extends AppError {
  constructor(detail: string) {
    super(400, 'weak_password', 'Weak password', detail, { errors: [{ pointer: '/password', detail }] });
  }
}

export class InvalidTokenError extends AppError {
  constructor() {
    super(400, 'invalid_token', 'Invalid token', 'The link is invalid, expired or has been used already; ask for a new one');
  }
}

/** Unknown e-mail and wrong password get this one answer, so nobody learns which addresses have accounts. */
export class InvalidCredentialsError extends AppError {
  constructor() {
    super(401, 'invalid_credentials', 'Invalid credentials', 'The e-mail address or the password is wrong');
  }
}

export class EmailNotVerifiedError extends AppError {
  constructor() {
    super(
      403,
      'email_not_verified',
      'E-mail not verified',
      'Open the link in the verification mail first; signing up again sends a new one',
    );
  }
}

export class DuplicateReviewError extends AppError {
  constructor() {
    super(409, 'duplicate_review', 'Duplicate review', 'You reviewed this agent less than 24 hours ago; one review per agent per day');
  }
}

export class LimitExceededError extends AppError {
  constructor(detail: string) {
    super(409, 'limit_exceeded', 'Limit exceeded', detail);
  }
}

/** A change-feed cursor this server did not hand out (`GET /agents/changes?since=`). */
export class InvalidCursorError extends AppError {
  constructor(pointer = '/since') {
    const detail =
      'The cursor is not one this server gave out; use a next_cursor or cursor from the feed, or leave since out to start over';
    super(400, 'invalid_cursor', 'Invalid cursor', detail, { errors: [{ pointer, detail: 'not a cursor of this feed' }] });
  }
}

/** An A2A Agent Card that could not be fetched or is not a valid card (`POST /submit` with `agent_card_url`). */
export class InvalidAgentCardError extends AppError {
  constructor(detail: string, errors: FieldError[]) {
    super(422, 'invalid_agent_card', 'Invalid Agent Card', detail, { errors });
  }
}
