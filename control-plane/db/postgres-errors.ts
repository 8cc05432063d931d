/** SQLSTATE codes the services react to, by name (see PostgreSQL's errcodes appendix). */
export const pgErrorCodes = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  checkViolation: '23514',
  /** Text holds a character the database encoding cannot (NUL in text). */
  characterNotInRepertoire: '22021',
  /** A \u0000 escape in jsonb. */
  untranslatableCharacter: '22P05',
} as const;

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
