/** SQLSTATE codes the services react to, by name (see PostgreSQL's errcodes appendix). */
export const pgErrorCodes = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  checkViolation: '23514',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
} as const;

interface PgErrorLike {
  code?: string;
  constraint?: string;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as PgErrorLike;
  return pgError?.code === pgErrorCodes.uniqueViolation && (constraint === undefined || pgError.constraint === constraint);
}

/** Errors after which the same transaction may succeed when simply run again. */
export function isRetryableTransactionError(error: unknown): boolean {
  const code = (error as PgErrorLike)?.code;
  return code === pgErrorCodes.serializationFailure || code === pgErrorCodes.deadlockDetected;
}
