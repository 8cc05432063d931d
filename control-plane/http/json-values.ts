import type { NextFunction, Request, Response } from 'express';
import type { FieldIssue } from '../errors/coerce-error.ts';
import { sendSurfaceError } from './surface-errors.ts';

/**
 * Two kinds of JSON a body can carry that would change without a word on the way in. In free-form
 * fields (project metadata, discovery answers, kit files) a `__proto__` key is swallowed as the
 * object's prototype when validation copies the object, and a number beyond a double's range
 * (`1e400`) parses as Infinity and is stored as null. (Numbers a double rounds, `1e-400` or 2^53 + 1,
 * are kept as JavaScript reads them, as any JSON parser in JavaScript does.)
 */
export function unkeepableValue(value: unknown, path: string[] = []): FieldIssue | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : { field: fieldName(path), issue: 'is a number too large to represent' };
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    if (key === '__proto__' && !Array.isArray(value)) return { field: fieldName([...path, key]), issue: 'is not a key that can be stored' };
    const issue = unkeepableValue(child, [...path, key]);
    if (issue) return issue;
  }
  return undefined;
}

const fieldName = (path: string[]) => path.join('.') || '(body)';

/** Refuses a parsed body holding such a value, by field, before any handler sees it. Runs after the depth limit. */
export function refuseUnkeepableValues(req: Request, res: Response, next: NextFunction): void {
  const issue = unkeepableValue(req.body);
  if (!issue) return next();
  sendSurfaceError(req, res, { code: 'VALIDATION_ERROR', message: 'Request validation failed', details: { issues: [issue] } });
}
