import type { NextFunction, Request, Response } from 'express';
import type { WireError } from '../errors/coerce-error.ts';
import { sendSurfaceError } from './surface-errors.ts';

/**
 * How deeply a request body may nest. Parsing copes with any depth, but serialising such a value
 * again (tRPC, the database driver) recurses and overflows the stack around 6,000 levels, which
 * would answer a 500. No field of the API needs more than a few levels; 64 leaves ample room.
 */
const MAX_BODY_DEPTH = 64;

/**
 * What a parsed body cannot be taken with, found in one walk: nesting past MAX_BODY_DEPTH, and
 * JSON that would change without a word on the way in. In free-form fields (project metadata,
 * discovery answers, kit files) a `__proto__` key is swallowed as the object's prototype when
 * validation copies the object, and a number beyond a double's range (`1e400`) parses as Infinity
 * and is stored as null. (Numbers a double rounds, `1e-400` or 2^53 + 1, are kept as JavaScript
 * reads them, as any JSON parser in JavaScript does.) The walk is iterative, so no depth of body
 * can overflow it; the first problem in document order is the one reported.
 */
export function bodyShapeProblem(body: unknown): WireError | undefined {
  const pending: Array<{ value: unknown; path: string[] }> = [{ value: body, path: [] }];
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value)) return fieldProblem(path, 'is a number too large to represent');
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= MAX_BODY_DEPTH) {
      return { code: 'VALIDATION_ERROR', message: `The request body nests deeper than ${MAX_BODY_DEPTH} levels`, details: { maxDepth: MAX_BODY_DEPTH } };
    }
    const children = Object.entries(value);
    if (!Array.isArray(value) && children.some(([key]) => key === '__proto__')) return fieldProblem([...path, '__proto__'], 'is not a key that can be stored');
    for (let i = children.length - 1; i >= 0; i--) pending.push({ value: children[i]![1], path: [...path, children[i]![0]] });
  }
  return undefined;
}

function fieldProblem(path: string[], issue: string): WireError {
  return { code: 'VALIDATION_ERROR', message: 'Request validation failed', details: { issues: [{ field: path.join('.') || '(body)', issue }] } };
}

/** Refuses a parsed body bodyShapeProblem finds a problem in, before any handler sees it. */
export function refuseMisshapenBodies(req: Request, res: Response, next: NextFunction): void {
  const problem = bodyShapeProblem(req.body);
  if (!problem) return next();
  sendSurfaceError(req, res, problem);
}
