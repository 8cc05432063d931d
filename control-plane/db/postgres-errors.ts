/** SQLSTATE codes the services react to, by name (see PostgreSQL's errcodes appendix). */
export const pgErrorCodes = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  checkViolation: '23514',
} as const;

interface PgErrorLike {
  code?: string;
  constraint?: string;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as PgErrorLike;
  return pgError?.code === pgErrorCodes.uniqueViolation && (constraint === undefined || pgError.constraint === constraint);
}
