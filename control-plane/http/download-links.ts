import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { exportParts, type ExportPart } from '../domains/exports/export-contents.ts';
import { AppError } from '../errors/app-error.ts';

/** Whom a link was handed to (and the API key they asked with): each download checks they still may read what it names. */
export interface LinkHolder {
  userId: string;
  apiKeyId?: string | undefined;
}

/** A kit execution's bundle: a stored blob. */
export interface BundleTarget {
  kind?: 'bundle';
  tenantId: string;
  holder: LinkHolder;
  /** The execution whose bundle the link serves. */
  organizationId: string;
  executionId: string;
  blobId: string;
  filename: string;
}

export const exportFormats = ['json', 'markdown', 'mcp'] as const;
export type ExportFormat = (typeof exportFormats)[number];

/** An export pack of a completed specification: built again, byte for byte, on each download. */
export interface ExportTarget {
  kind: 'export';
  tenantId: string;
  holder: LinkHolder;
  projectId: string;
  specificationId: string;
  format: ExportFormat;
  /** What the pack holds: spec, dod, testPlan, taskGraph, runbook, mcpConfig. */
  include: ExportPart[];
  filename: string;
}

export type DownloadTarget = BundleTarget | ExportTarget;

export interface DownloadLinks {
  /** A signed, expiring `/api/downloads/<token>` path for one blob of one tenant. */
  create(target: DownloadTarget, ttlSeconds?: number): { path: string; expiresAt: Date };
  /** The target of a token, or FORBIDDEN when it was tampered with or has expired. */
  verify(token: string): DownloadTarget;
}

const DEFAULT_TTL_SECONDS = 15 * 60;

/**
 * What a forged link answers — and a genuine one whose holder may no longer read what it names,
 * so a link tells whoever has it nothing about what became of its holder or its file.
 */
export const invalidDownloadLink = () => new AppError('FORBIDDEN', 'This download link is not valid');

/**
 * The signed payload: a bundle's (as links have always been), or an export's (`n: "export"`). A
 * link signed before it named its holder has no `u`: it is not valid. The ids are checked as ids,
 * as every other input is: a signed payload that names something else (only a holder of
 * SERVER_SECRET can sign one: an operator's script, another version) is an invalid link, not a
 * query PostgreSQL refuses with a 500.
 */
const bundlePayload = z.object({
  t: z.guid(),
  u: z.guid(),
  k: z.guid().optional(),
  o: z.guid(),
  x: z.guid(),
  b: z.guid(),
  f: z.string(),
  e: z.number(),
});
const exportPayload = z.strictObject({
  n: z.literal('export'),
  t: z.guid(),
  u: z.guid(),
  k: z.guid().optional(),
  p: z.guid(),
  s: z.guid(),
  m: z.enum(exportFormats),
  // The parts a pack holds, each once: a link naming another is not one POST /exports/download hands out.
  i: z.array(z.enum(exportParts)).refine((parts) => new Set(parts).size === parts.length),
  f: z.string(),
  e: z.number(),
});

/** HMAC-SHA256 over the payload with a key derived from SERVER_SECRET, so every API node agrees. */
export function createDownloadLinks(serverSecret: string): DownloadLinks {
  const key = createHmac('sha256', serverSecret).update('specwright-download-links').digest();
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest('base64url');

  return {
    create(target, ttlSeconds = DEFAULT_TTL_SECONDS) {
      const expiresAt = new Date(Math.ceil(Date.now() / 1000 + ttlSeconds) * 1000);
      const holder = { t: target.tenantId, u: target.holder.userId, ...(target.holder.apiKeyId === undefined ? {} : { k: target.holder.apiKeyId }) };
      const signed: z.infer<typeof bundlePayload> | z.infer<typeof exportPayload> =
        target.kind === 'export'
          ? { n: 'export', ...holder, p: target.projectId, s: target.specificationId, m: target.format, i: target.include, f: target.filename, e: expiresAt.getTime() / 1000 }
          : { ...holder, o: target.organizationId, x: target.executionId, b: target.blobId, f: target.filename, e: expiresAt.getTime() / 1000 };
      const payload = Buffer.from(JSON.stringify(signed)).toString('base64url');
      return { path: `/api/downloads/${payload}.${sign(payload)}`, expiresAt };
    },
    verify(token) {
      const [payload, signature, extra] = token.split('.');
      const expected = payload ? Buffer.from(sign(payload)) : Buffer.alloc(0);
      const given = Buffer.from(signature ?? '');
      if (!payload || extra !== undefined || given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidDownloadLink();
      const json = parsedJson(Buffer.from(payload, 'base64url').toString('utf8'));
      const isExport = typeof json === 'object' && json !== null && 'n' in json;
      const decoded = (isExport ? exportPayload : bundlePayload).safeParse(json);
      if (!decoded.success) throw invalidDownloadLink();
      // Expired from `expiresAt` on, as a JWT is from its `exp`: the instant the answer names is not still valid.
      if (decoded.data.e * 1000 <= Date.now()) throw new AppError('FORBIDDEN', 'This download link has expired; ask for a new one');
      const { t, u, k, f } = decoded.data;
      const holder = { userId: u, apiKeyId: k };
      if ('n' in decoded.data) {
        const { p, s: specificationId, m, i } = decoded.data;
        return { kind: 'export', tenantId: t, holder, projectId: p, specificationId, format: m, include: i, filename: f };
      }
      const { o, x, b } = decoded.data;
      return { kind: 'bundle', tenantId: t, holder, organizationId: o, executionId: x, blobId: b, filename: f };
    },
  };
}

/** The JSON a signed payload holds, or undefined when it holds none (the schema then refuses it). */
function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
