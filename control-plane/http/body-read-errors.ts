import type { Request } from 'express';
import type { WireError } from '../errors/coerce-error.ts';
import { INVALID_UTF8 } from './json-body.ts';

type BodyReadError = { type?: string; status?: number; statusCode?: number; limit?: number; body?: unknown };

/**
 * What the caller is told when express could not read a request body (body-parser / raw-body
 * errors): each is the caller's mistake, never an INTERNAL_ERROR. Undefined for anything else.
 */
export function bodyReadFailure(error: unknown, req: Request): WireError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, status, statusCode, limit, body } = error as BodyReadError;
  switch (type) {
    case 'entity.too.large':
      return { code: 'PAYLOAD_TOO_LARGE', message: 'The request body exceeds the size limit', details: { limitBytes: limit } };
    case 'entity.parse.failed':
      // Also what a bare `null`, `"text"` or `42` gets: valid JSON, but bodies are objects.
      return { code: 'VALIDATION_ERROR', message: isJson(body) ? 'The request body is not a JSON object' : 'The request body is not valid JSON' };
    case INVALID_UTF8:
      return { code: 'VALIDATION_ERROR', message: 'The request body is not valid UTF-8' };
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body encoding is not supported' };
    case 'request.size.invalid':
      return { code: 'VALIDATION_ERROR', message: 'The request body does not match its Content-Length' };
    case 'request.aborted':
      return { code: 'VALIDATION_ERROR', message: 'The request body ended before it was complete' };
  }
  const httpStatus = status ?? statusCode;
  if (httpStatus === undefined || httpStatus < 400 || httpStatus >= 500) return undefined;
  // body-parser marks a failure to inflate a compressed body 400 without a type.
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') return { code: 'VALIDATION_ERROR', message: `The request body is not valid ${encoding} data` };
  return { code: 'VALIDATION_ERROR', message: 'The request body could not be read' };
}

/** Whether the text body-parser refused (it keeps it on the error) is JSON all the same: a scalar. */
function isJson(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}
