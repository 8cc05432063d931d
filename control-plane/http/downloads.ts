import type { Request, Response } from 'express';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { withTenant } from '../db/tenant-transaction.ts';
import { exportForDownload } from '../domains/exports/exports.service.ts';
import { describeBundleForDownload, readBundleForDownload } from '../domains/kit-executions/kit-executions.service.ts';
import { logServerFault, toWireError } from '../errors/coerce-error.ts';
import type { DownloadLinks, DownloadTarget } from './download-links.ts';
import { clientAddressOf } from './client-address.ts';
import { createDownloadSlots, DOWNLOAD_SLOTS } from './download-slots.ts';
import { sendSurfaceError } from './surface-errors.ts';

/**
 * GET /api/downloads/<token>: the bytes a signed link names — a kit execution's bundle, or an export
 * pack of a specification, built again on each download. The link is the credential (it is handed
 * out to an authenticated caller and expires), so no other authentication is asked for; but the
 * user it was handed to must still be allowed to read what it names, which is read under its
 * tenant's row-level security. A HEAD answers the same status and headers, checked the
 * same way, from what describes the blob: its bytes are not read from the database. A GET for one
 * byte range answers 206 with that part, so a broken download can be resumed.
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
      if (req.method === 'HEAD' && target.kind !== 'export') {
        const described = await withTenant(db, target.tenantId, (trx) => describeBundleForDownload(trx, target));
        setDownloadHeaders(res, target, described);
        res.end();
        return;
      }
      // An export pack is built again from its specification (a HEAD builds it too: its length and digest are the pack's).
      const blob = await withTenant(db, target.tenantId, (trx) => (target.kind === 'export' ? exportForDownload(trx, target) : readBundleForDownload(trx, target)));
      if (req.method === 'HEAD') {
        setDownloadHeaders(res, target, { contentType: blob.contentType, contentLength: blob.content.length, sha256: blob.sha256 });
        res.end();
        return;
      }
      const described = { contentType: blob.contentType, contentLength: blob.content.length, sha256: blob.sha256 };
      const part = requestedPart(req, described);
      if (part === 'unsatisfiable') {
        // Past the end: a resume of a download that had in fact finished. The length tells the client so.
        res.status(416).setHeader('Content-Range', `bytes */${described.contentLength}`);
        res.setHeader('Cache-Control', 'private, no-store');
        res.end();
        return;
      }
      setDownloadHeaders(res, target, part ? { ...described, contentLength: part.end - part.start + 1 } : described);
      if (part) res.status(206).setHeader('Content-Range', `bytes ${part.start}-${part.end}/${described.contentLength}`);
      res.end(part ? blob.content.subarray(part.start, part.end + 1) : blob.content);
    } catch (error) {
      const wire = toWireError(error);
      logServerFault(req.log, error, wire);
      sendSurfaceError(req, res, wire);
    } finally {
      letGo();
    }
  };
}

/**
 * The one byte range a GET asks for — a download resumed after its connection broke (`curl -C -`, a
 * browser's resume) — or undefined for the whole file: no Range, one that does not parse, several
 * ranges, or an If-Range naming anything but this file's ETag. The file behind a link never changes
 * (the link names its blob), so its digest is a strong validator.
 */
function requestedPart(req: Request, blob: { contentLength: number; sha256: string }): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (req.headers.range === undefined) return undefined;
  const ifRange = req.headers['if-range'];
  if (ifRange !== undefined && ifRange !== entityTagOf(blob.sha256)) return undefined;
  const ranges = req.range(blob.contentLength, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === undefined || ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return ranges[0];
}

const entityTagOf = (sha256: string) => `"${sha256}"`;

/** The headers of a download, alike for GET and HEAD. */
function setDownloadHeaders(res: Response, target: DownloadTarget, blob: { contentType: string; contentLength: number; sha256: string }): void {
  res.setHeader('Content-Type', blob.contentType);
  res.setHeader('Content-Length', String(blob.contentLength));
  res.setHeader('Content-Disposition', `attachment; filename="${target.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`);
  res.setHeader('Digest', `sha-256=${Buffer.from(blob.sha256, 'hex').toString('base64')}`);
  res.setHeader('Cache-Control', 'private, no-store');
  res.setHeader('ETag', entityTagOf(blob.sha256));
  res.setHeader('Accept-Ranges', 'bytes');
}
