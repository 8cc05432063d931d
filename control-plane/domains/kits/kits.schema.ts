import { z } from 'zod';
import { pagingInput } from '../../http/paging.ts';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { uuidInput } from '../../http/uuid-input.ts';

export const kitTypes = ['file', 'platform', 'api', 'hybrid', 'composite'] as const;
export const kitStatuses = ['active', 'deprecated', 'draft'] as const;
export const kitPhases = ['SPEC', 'CHECK', 'DISCOVER', 'PLAN', 'VALIDATE', 'APPLY', 'VERIFY'] as const;

/**
 * A kit id as every kit route takes it, in a path, a body or a query: a slug (which is never empty,
 * so an empty id gets the slug's one message).
 */
export const kitIdInput = z.string().max(100).regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'a kit id is lowercase letters, digits and hyphens');

export const orgInput = z.object({ orgId: uuidInput() });

export const kitSummaryOutput = z.object({
  id: z.uuid(),
  kitId: z.string(),
  displayName: z.string(),
  description: z.string(),
  version: z.string().nullable(),
  kitType: z.enum(kitTypes),
  status: z.enum(kitStatuses),
  platformName: z.string(),
  platformCategory: z.string(),
  supportedPhases: z.array(z.enum(kitPhases)),
  outputCount: z.number().int(),
  builtIn: z.boolean(),
  createdAt: z.iso.datetime(),
});

export const kitDetailOutput = kitSummaryOutput.extend({
  manifest: z.record(z.string(), z.unknown()),
  versions: z.array(z.object({ version: z.string(), createdAt: z.iso.datetime() })),
});

export const listKitsInput = orgInput.extend(pagingInput.shape).extend({
  type: z.enum(kitTypes).optional(),
  status: z.enum(kitStatuses).optional(),
});

export const listKitsOutput = z.object({
  kits: z.array(kitSummaryOutput),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});

export const kitRefInput = orgInput.extend({ kitId: kitIdInput });

/** A kit version to publish: its manifest and every file the manifest references, as text. */
export const publishKitInput = orgInput
  .extend({
    manifest: z.record(z.string(), z.unknown()),
    files: z.record(z.string().min(1).max(500), z.string()).refine((files) => Object.keys(files).length <= 1000, 'at most 1000 files'),
  })
  .strict()
  .superRefine(refuseUnstorableText);

export const publishedKitOutput = z.object({
  id: z.uuid(),
  kitId: z.string(),
  version: z.string(),
  displayName: z.string(),
  status: z.enum(kitStatuses),
  createdAt: z.iso.datetime(),
});

export const setKitStatusInput = kitRefInput.extend({ status: z.enum(['active', 'deprecated']) }).strict();

export type KitSummary = z.infer<typeof kitSummaryOutput>;
export type KitDetail = z.infer<typeof kitDetailOutput>;
