import type { Request, Response } from 'express';

/**
 * For a request answered before its body is read. A body the client declared within `limitBytes`
 * is read and dropped as it arrives, as Node does for any body left unread on a connection kept
 * open: a client still writing it would otherwise have the connection reset under it and lose the
 * answer with it (EPIPE). Any other body — larger, or of undeclared length — is not waited for: the
 * connection closes after the answer.
 */
export function closeUnlessDrainable(req: Request, res: Response, limitBytes: number): void {
  if (!(Number(req.headers['content-length']) <= limitBytes)) res.setHeader('Connection', 'close');
}
