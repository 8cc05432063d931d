import type { ErrorCode } from './error-catalog.ts';

export type ErrorDetails = Record<string, unknown>;

/**
 * A failure the caller can act on. Services throw these; one mapping turns them into tRPC errors
 * and one into the wire envelope. The message is shown to the caller as is, so it never carries
 * secrets or internals.
 */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

export const notFound = (what: string, details?: ErrorDetails) =>
  new AppError('NOT_FOUND', `${what} was not found`, details);
export const conflict = (message: string, details?: ErrorDetails) =>
  new AppError('CONFLICT', message, details);
export const invalid = (message: string, details?: ErrorDetails) =>
  new AppError('VALIDATION_ERROR', message, details);
export const forbidden = (message: string, details?: ErrorDetails) =>
  new AppError('FORBIDDEN', message, details);
export const unauthorized = (message = 'Authentication is required') =>
  new AppError('UNAUTHORIZED', message);
