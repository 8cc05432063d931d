import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors/app-error.ts';

export interface DownloadTarget {
  tenantId: string;
  blobId: string;
  filename: string;
}

export interface DownloadLinks {
  /** A signed, expiring `/api/downloads/<token>` path for one blob of one tenant. */
  create(target: DownloadTarget, ttlSeconds?: number): { path: string; expiresAt: Date };
  /** The target of a token, or FORBIDDEN when it was tampered with or has expired. */
  verify(token: string): DownloadTarget;
}

const DEFAULT_TTL_SECONDS = 15 * 60;

/** HMAC-SHA256 over the payload with a key derived from SERVER_SECRET, so every API node agrees. */
export function createDownloadLinks(serverSecret: string): DownloadLinks {
  const key = createHmac('sha256', serverSecret).update('specwright-download-links').digest();
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest('base64url');

  return {
    create(target, ttlSeconds = DEFAULT_TTL_SECONDS) {
      const expiresAt = new Date(Math.ceil(Date.now() / 1000 + ttlSeconds) * 1000);
      const payload = Buffer.from(JSON.stringify({ t: target.tenantId, b: target.blobId, f: target.filename, e: expiresAt.getTime() / 1000 })).toString('base64url');
      return { path: `/api/downloads/${payload}.${sign(payload)}`, expiresAt };
    },
    verify(token) {
      const [payload, signature, extra] = token.split('.');
      const expected = payload ? Buffer.from(sign(payload)) : Buffer.alloc(0);
      const given = Buffer.from(signature ?? '');
      if (!payload || extra !== undefined || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new AppError('FORBIDDEN', 'This download link is not valid');
      }
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { t: string; b: string; f: string; e: number };
      if (decoded.e * 1000 < Date.now()) throw new AppError('FORBIDDEN', 'This download link has expired; ask for a new one');
      return { tenantId: decoded.t, blobId: decoded.b, filename: decoded.f };
    },
  };
}
