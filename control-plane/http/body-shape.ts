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
 * can overflow it, and it allocates per object, not per value — a body of millions of numbers
 * costs one pass — keeping only the path it is on; the first problem in document order is the one
 * reported.
 */
export function bodyShapeProblem(body: unknown): WireError | undefined {
  if (typeof body === 'number') return Number.isFinite(body) ? undefined : fieldProblem([], 'is a number too large to represent');
  if (body === null || typeof body !== 'object') return undefined;
  const path: string[] = [];
  const entered = enter(body, path);
  if (entered.problem) return entered.problem;
  const open: Frame[] = [entered.frame];
  while (open.length > 0) {
    const frame = open.at(-1)!;
    if (frame.next === frame.size) {
      open.pop();
      path.pop();
      continue;
    }
    const index = frame.next;
    frame.next += 1;
    const child = frame.keys ? (frame.value as Record<string, unknown>)[frame.keys[index]!] : (frame.value as unknown[])[index];
    // Most values are neither: the name of the place is made only for one that is.
    if (typeof child === 'number') {
      if (!Number.isFinite(child)) return fieldProblem([...path, keyOf(frame, index)], 'is a number too large to represent');
      continue;
    }
    if (child === null || typeof child !== 'object') continue;
    path.push(keyOf(frame, index));
    const nested = enter(child, path);
    if (nested.problem) return nested.problem;
    open.push(nested.frame);
  }
  return undefined;
}

/** An object or array being walked: its keys (objects only) and the next child to visit. */
type Frame = { value: object; keys: string[] | undefined; size: number; next: number };

const keyOf = (frame: Frame, index: number) => (frame.keys ? frame.keys[index]! : String(index));

function enter(value: object, path: string[]): { frame: Frame; problem?: undefined } | { problem: WireError } {
  if (path.length >= MAX_BODY_DEPTH) {
    return { problem: { code: 'VALIDATION_ERROR', message: `The request body nests deeper than ${MAX_BODY_DEPTH} levels`, details: { maxDepth: MAX_BODY_DEPTH } } };
  }
  if (Array.isArray(value)) return { frame: { value, keys: undefined, size: value.length, next: 0 } };
  if (Object.hasOwn(value, '__proto__')) return { problem: fieldProblem([...path, '__proto__'], 'is not a key that can be stored') };
  const keys = Object.keys(value);
  return { frame: { value, keys, size: keys.length, next: 0 } };
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
