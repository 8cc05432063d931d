import type { Request, Response } from 'express';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { withTenant } from '../db/tenant-transaction.ts';
import { describeBundleForDownload, readBundleForDownload } from '../domains/kit-executions/kit-executions.service.ts';
import { logServerFault, toWireError } from '../errors/coerce-error.ts';
import type { DownloadLinks, DownloadTarget } from './download-links.ts';
import { clientAddressOf } from './client-address.ts';
import { createDownloadSlots, DOWNLOAD_SLOTS } from './download-slots.ts';
import { sendSurfaceError } from './surface-errors.ts';

/**
 * GET /api/downloads/<token>: the bytes a signed link names. The link is the credential (it is
 * handed out to an authenticated caller and expires), so no other authentication is asked for;
 * but the user it was handed to must still be allowed to read its bundle, and the blob is read
 * under its tenant's row-level security. A HEAD answers the same status and headers, checked the
 * same way, from what describes the blob: its bytes are not read from the database.
 */
export function createDownloadHandler(db: Kysely<Database>, links: DownloadLinks) {
  const slots = createDownloadSlots();
  return async (req: Request<{ token: string }>, res: Response) => {
    const slot = slots.take(clientAddressOf(req.ip ?? req.socket.remoteAddress));
    if ('refused' in slot) {
      res.setHeader('Retry-After', '1');
      return sendSurfaceError(
        req,
        res,
        slot.refused === 'address'
          ? { code: 'RATE_LIMITED', message: `At most ${DOWNLOAD_SLOTS.perAddress} downloads at once from one address; retry when one has finished` }
          : { code: 'SERVICE_UNAVAILABLE', message: 'Too many downloads at once; retry shortly' },
      );
    }
    // Held until the response is done with (read to the end or abandoned) and the read behind it has
    // ended: a client that goes away while the blob is being read does not free the slot, or
    // clients that abandon downloads at once would start reads, each waiting for a database
    // connection and then holding its ZIP, without bound.
    let holding = 2;
    const letGo = () => {
      holding -= 1;
      if (holding === 0) slot.release();
    };
    res.once('close', letGo);
    try {
      const target = links.verify(req.params.token);
      if (req.method === 'HEAD') {
        const described = await withTenant(db, target.tenantId, (trx) => describeBundleForDownload(trx, target));
        setDownloadHeaders(res, target, described);
        res.end();
        return;
      }
      const blob = await withTenant(db, target.tenantId, (trx) => readBundleForDownload(trx, target));
      setDownloadHeaders(res, target, { contentType: blob.contentType, contentLength: blob.content.length, sha256: blob.sha256 });
      res.end(blob.content);
    } catch (error) {
      const wire = toWireError(error);
      logServerFault(req.log, error, wire);
      sendSurfaceError(req, res, wire);
    } finally {
      letGo();
    }
  };
}

/** The headers of a download, alike for GET and HEAD. */
function setDownloadHeaders(res: Response, target: DownloadTarget, blob: { contentType: string; contentLength: number; sha256: string }): void {
  res.setHeader('Content-Type', blob.contentType);
  res.setHeader('Content-Length', String(blob.contentLength));
  res.setHeader('Content-Disposition', `attachment; filename="${target.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`);
  res.setHeader('Digest', `sha-256=${Buffer.from(blob.sha256, 'hex').toString('base64')}`);
  res.setHeader('Cache-Control', 'private, no-store');
}
