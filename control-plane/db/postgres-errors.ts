/** SQLSTATE codes the services react to, by name (see PostgreSQL's errcodes appendix). */
export const pgErrorCodes = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  checkViolation: '23514',
  /** Text holds a character the database encoding cannot (NUL in text). */
  characterNotInRepertoire: '22021',
  /** A \u0000 escape in jsonb. */
  untranslatableCharacter: '22P05',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  /** The database a connection names does not exist. */
  invalidCatalogName: '3D000',
  /** A statement cancelled: by statement_timeout, or by someone's pg_cancel_backend. */
  queryCanceled: '57014',
} as const;

/** SQLSTATE class 28 (invalid authorization specification): the server refused the login. */
const invalidAuthorizationClass = '28';

interface PgErrorLike {
  code?: string;
  constraint?: string;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as PgErrorLike;
  return pgError?.code === pgErrorCodes.uniqueViolation && (constraint === undefined || pgError.constraint === constraint);
}

/**
 * A value the database cannot store as text — inputs are checked for this (db/storable-text.ts);
 * this catches any path that was missed, so it still answers as the caller's mistake.
 */
export function isUnstorableText(error: unknown): boolean {
  const code = (error as PgErrorLike)?.code;
  return code === pgErrorCodes.characterNotInRepertoire || code === pgErrorCodes.untranslatableCharacter;
}

/**
 * The server answered a connection with no: a login it refuses (a wrong password or user) or a
 * database that does not exist. Unlike one it cannot be reached on, that never passes by waiting.
 */
export function isLoginOrDatabaseRefusal(error: unknown): boolean {
  const code = (error as PgErrorLike)?.code;
  return typeof code === 'string' && (code.startsWith(invalidAuthorizationClass) || code === pgErrorCodes.invalidCatalogName);
}

/**
 * PostgreSQL rolled the transaction back to settle a conflict with a concurrent one (a deadlock, a
 * serialization failure): nothing of it was kept, and running it again usually passes. Looks
 * through wrappers (a tRPC error carries what a procedure threw as its cause).
 */
export function isTransactionConflict(error: unknown): boolean {
  for (let depth = 0, current = error; depth < 4 && current; depth += 1, current = (current as { cause?: unknown }).cause) {
    const code = (current as PgErrorLike).code;
    if (code === pgErrorCodes.serializationFailure || code === pgErrorCodes.deadlockDetected) return true;
  }
  return false;
}

/**
 * SQLSTATE classes whose errors come back the same on every retry of the same statement with the
 * same values, with what each says; anything else (lost connections, deadlocks, serialization
 * failures, shutdowns, exhausted resources) may pass on a retry.
 */
const permanentClasses: Readonly<Record<string, string>> = {
  '22': 'a value it cannot hold',
  '23': 'a rule it enforces',
  '42': 'a statement it cannot run',
  '54': 'one of its limits',
};

/**
 * Errors of other classes that are just as permanent, by code and message. A protocol violation is
 * class 08 (connection exceptions), and poolers such as PgBouncer send it for passing trouble (no
 * server connection, a full pool); but "bind message …" says the statement itself cannot be sent as
 * it is — one with more than 65,535 parameters answers it every time.
 */
const permanentErrors: ReadonlyArray<{ code: string; message: RegExp; description: string }> = [
  { code: '08P01', message: /^bind message /, description: 'a statement it cannot take (protocol violation)' },
];

function permanentErrorOf(error: unknown): string | undefined {
  const { code, message } = (error ?? {}) as PgErrorLike & { message?: unknown };
  return permanentErrors.find((known) => known.code === code && typeof message === 'string' && known.message.test(message))?.description;
}

/**
 * A database error that no retry can cure, with what it says (`a rule it enforces (SQLSTATE 23514,
 * constraint x)`), or undefined for one that may pass.
 */
export function permanentRefusalOf(error: unknown): { constraint?: string; description: string } | undefined {
  const { code, constraint } = (error ?? {}) as PgErrorLike;
  const refused = typeof code === 'string' ? (permanentErrorOf(error) ?? permanentClasses[code.slice(0, 2)]) : undefined;
  if (refused === undefined || code === undefined) return undefined;
  const description = `${refused} (SQLSTATE ${code}${typeof constraint === 'string' ? `, constraint ${constraint}` : ''})`;
  return typeof constraint === 'string' ? { constraint, description } : { description };
}

const unreachableNodeCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// pg's words, without a code, for a connection not had within connectionTimeoutMillis: not opened
// ("Connection terminated due to connection timeout") or not freed by another user of a full pool.
const CONNECT_TIMEOUT = /due to connection timeout|timeout exceeded when trying to connect/;

/** A connection not had within the pool's connectionTimeoutMillis (DATABASE_CONNECT_TIMEOUT_MS). */
export function isConnectTimeout(error: unknown): boolean {
  return error instanceof Error && CONNECT_TIMEOUT.test(error.message);
}

// pg's words when it gave up waiting for an answer (query_timeout) and dropped the connection.
const GIVEN_UP = /^Query read timeout$/;

/**
 * A statement outlasted DATABASE_STATEMENT_TIMEOUT_MS: PostgreSQL cancelled it (SQLSTATE 57014), or
 * the server stayed silent and the service gave it up. Nothing of it was kept; it may pass later.
 */
export function isStatementTimeout(error: unknown): boolean {
  const { code } = (error ?? {}) as PgErrorLike;
  const message = error instanceof Error ? error.message : '';
  return (code === pgErrorCodes.queryCanceled && /statement timeout/.test(message)) || GIVEN_UP.test(message);
}

// node-postgres reports a lost or refused connection in words, without a code; pg-pool, a pool this
// process has already ended (it is shutting down: another node should take the request).
const unreachableMessages = [/^Connection terminated/, CONNECT_TIMEOUT, /is not queryable/, /^Cannot use a pool after calling end on the pool/];

/**
 * The database cannot be reached or will not take this connection: refused, lost, timed out, shutting
 * down (SQLSTATE 57P01–57P03), a connection exception (class 08), a login it refuses (class 28), or
 * this process's pool already ended.
 * Nothing the caller sent caused it, and it may pass: SERVICE_UNAVAILABLE, not INTERNAL_ERROR.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code } = (error ?? {}) as PgErrorLike;
  if (typeof code === 'string') {
    if (unreachableNodeCodes.has(code)) return true;
    if (permanentErrorOf(error) !== undefined) return false;
    if (/^(08|28)/.test(code) || ['57P01', '57P02', '57P03'].includes(code)) return true;
  }
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable);
  const message = error instanceof Error ? error.message : '';
  return unreachableMessages.some((pattern) => pattern.test(message));
}
