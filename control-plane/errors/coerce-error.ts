import { TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import { isDatabaseUnavailable, isStatementTimeout, isTransactionConflict, isUnstorableText } from '../db/postgres-errors.ts';
import { AppError } from './app-error.ts';
import type { ErrorCode } from './error-catalog.ts';
import { cutForAnswer, quotedPath } from './quoted-input.ts';

export interface WireError {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export interface FieldIssue {
  field: string;
  issue: string;
}

/**
 * Issues listed in one answer. A body of 100,000 unknown keys would otherwise be answered with an
 * issue for each (megabytes); the first ones show what is wrong, and a last entry counts the rest.
 */
export const MAX_LISTED_ISSUES = 100;

/**
 * Characters of a field (or an issue's text) quoted in an answer. A caller's key may be as long as
 * the body: 100 unknown keys of 5,000 characters would otherwise be answered with half a megabyte.
 * Longer ones are cut and end in "…"; the start says which field is meant.
 */
const MAX_QUOTED_FIELD_LENGTH = 64;
const MAX_QUOTED_ISSUE_LENGTH = 300;

export function zodIssuesToFields(error: ZodError): FieldIssue[] {
  const fields = allIssuesToFields(error);
  const listed = fields.slice(0, MAX_LISTED_ISSUES).map(({ field, issue }) => ({
    field: cutForAnswer(field, MAX_QUOTED_FIELD_LENGTH),
    issue: cutForAnswer(issue, MAX_QUOTED_ISSUE_LENGTH),
  }));
  if (fields.length <= MAX_LISTED_ISSUES) return listed;
  return [...listed, { field: '(more)', issue: `and ${fields.length - MAX_LISTED_ISSUES} more issues like these` }];
}

function allIssuesToFields(error: ZodError): FieldIssue[] {
  // zod goes on checking a value after its type is wrong, and words what follows about the value it
  // got: `["abc"]` for a slug is "expected string" and also "expected array to have >=3 items".
  // Only the first says anything about the field.
  const mistyped = new Set(error.issues.filter((issue) => issue.code === 'invalid_type').map((issue) => pathKey(issue.path)));
  const telling = error.issues.filter((issue) => issue.code === 'invalid_type' || !mistyped.has(pathKey(issue.path)));
  return telling.flatMap((issue) => {
    const prefix = issue.path.map(String).join('.');
    // An unknown key is the caller's field, not the object's: name each one.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: prefix ? `${prefix}.${key}` : key, issue: 'is not a field that can be set here' }));
    }
    return [{ field: prefix || '(body)', issue: issue.message }];
  });
}

const pathKey = (path: readonly PropertyKey[]) => JSON.stringify(path.map(String));

const trpcCodeToErrorCode: Partial<Record<TRPCError['code'], ErrorCode>> = {
  BAD_REQUEST: 'VALIDATION_ERROR',
  PARSE_ERROR: 'VALIDATION_ERROR',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  TOO_MANY_REQUESTS: 'RATE_LIMITED',
  METHOD_NOT_SUPPORTED: 'NOT_FOUND',
  UNPROCESSABLE_CONTENT: 'IDEMPOTENCY_MISMATCH',
};

/**
 * The database's passing trouble, which answers SERVICE_UNAVAILABLE: what the caller is told, and
 * what the log line says. The first that matches wins.
 */
const databaseTroubles = [
  { matches: isDatabaseUnavailable, message: 'The database cannot be reached; try again shortly', logged: 'database unavailable' },
  { matches: isStatementTimeout, message: 'The database did not answer in time; try again shortly', logged: 'database too slow: a statement outlasted DATABASE_STATEMENT_TIMEOUT_MS' },
  {
    matches: isTransactionConflict,
    message: 'The request kept colliding with concurrent ones and changed nothing; try again shortly',
    logged: 'transaction conflicts outlasted their retries',
  },
];
const databaseTroubleOf = (error: unknown) => databaseTroubles.find((trouble) => trouble.matches(error));

const genericMessage = 'An unexpected error occurred; quote the request id when reporting it';

/**
 * Normalises anything thrown into the wire error. Only AppErrors, zod failures and tRPC's own
 * client errors keep their message; everything else becomes an INTERNAL_ERROR that reveals nothing.
 */
export function toWireError(thrown: unknown): WireError {
  const error = thrown instanceof TRPCError && thrown.cause ? unwrapTrpc(thrown) : thrown;
  if (error instanceof AppError) {
    return error.details
      ? { code: error.code, message: error.message, details: error.details }
      : { code: error.code, message: error.message };
  }
  if (error instanceof ZodError) {
    return {
      code: 'VALIDATION_ERROR',
      message: 'Request validation failed',
      details: { issues: zodIssuesToFields(error) },
    };
  }
  const trouble = databaseTroubleOf(error);
  if (trouble) return { code: 'SERVICE_UNAVAILABLE', message: trouble.message };
  if (isUnstorableText(error)) {
    return { code: 'VALIDATION_ERROR', message: 'The request carries text that cannot be stored (a NUL character or an unpaired surrogate)' };
  }
  if (error instanceof TRPCError) {
    const code = trpcCodeToErrorCode[error.code];
    if (code) return { code, message: trpcMessage(error.message) };
  }
  return { code: 'INTERNAL_ERROR', message: genericMessage };
}

/**
 * tRPC's own words end quoting the procedure path the caller sent (`No procedure found on path
 * "…"`), which may be kilobytes long: it is quoted as a path no route takes is.
 */
const trpcMessage = (message: string) => message.replace(/( path ")(.*)"$/s, (_whole, before: string, path: string) => `${before}${quotedPath(path)}"`);

function unwrapTrpc(error: TRPCError): unknown {
  const cause = error.cause;
  if (cause instanceof AppError) return cause;
  if (isZodError(cause)) {
    // The caller's mistake only where tRPC parsed the input (BAD_REQUEST). A procedure's answer that
    // fails its own schema ("Output validation failed": a stored row it cannot describe) is the
    // service's fault, INTERNAL_SERVER_ERROR, and must not read as the caller's bad request.
    if (error.code !== 'BAD_REQUEST') return error;
    // tRPC wraps non-Error throwables; a ZodError from input parsing may arrive by name only.
    return cause instanceof ZodError ? cause : new ZodError(cause.issues);
  }
  return error.code === 'INTERNAL_SERVER_ERROR' ? cause : error;
}

const isZodError = (value: unknown): value is Pick<ZodError, 'issues'> =>
  value instanceof ZodError || (value instanceof Error && value.name === 'ZodError' && 'issues' in value);

/**
 * Failures that are the service's, not the caller's, go to the log at error level (the caller gets
 * only the request id): a bug (INTERNAL_ERROR), or a database that cannot be reached or a transaction
 * whose conflicts outlasted its retries (SERVICE_UNAVAILABLE). A SERVICE_UNAVAILABLE the service
 * answered on purpose goes at warn level, in its own words.
 */
export function logServerFault(log: { error(object: object, message: string): void; warn(object: object, message: string): void }, thrown: unknown, wire: WireError = toWireError(thrown)): void {
  const cause = thrown instanceof TRPCError && thrown.cause ? thrown.cause : thrown;
  if (wire.code === 'INTERNAL_ERROR') log.error({ err: cause }, 'unexpected error');
  // A refusal the service chose (busy, a key ring or an identity provider not ready) says why itself.
  else if (wire.code === 'SERVICE_UNAVAILABLE' && cause instanceof AppError) log.warn({}, `answered SERVICE_UNAVAILABLE: ${wire.message}`);
  else if (wire.code === 'SERVICE_UNAVAILABLE') log.error({ err: cause }, databaseTroubleOf(cause)?.logged ?? 'database unavailable');
}
