import type { NextFunction, Request, Response } from 'express';
import { nestsDeeperThan } from '../../kit-runtime/index.ts';
import { sendSurfaceError } from './surface-errors.ts';

/**
 * How deeply a request body may nest. Parsing copes with any depth, but serialising such a value
 * again (tRPC, the database driver) recurses and overflows the stack around 6,000 levels, which
 * would answer a 500. No field of the API needs more than a few levels; 64 leaves ample room.
 */
const MAX_BODY_DEPTH = 64;

/** Refuses a parsed JSON body that nests deeper than MAX_BODY_DEPTH, before any handler sees it. */
export function refuseDeepBodies(req: Request, res: Response, next: NextFunction): void {
  if (!nestsDeeperThan(req.body, MAX_BODY_DEPTH)) return next();
  sendSurfaceError(req, res, { code: 'VALIDATION_ERROR', message: `The request body nests deeper than ${MAX_BODY_DEPTH} levels`, details: { maxDepth: MAX_BODY_DEPTH } });
}
