import { z } from 'zod';
import { basicListInput, basicListOutput } from '../../basic/basic-paging.ts';
import { uuidInput } from '../../http/uuid-input.ts';

/** Variant A's kit status (seed §2.1): published is Variant B's active (DESIGN §5.2). */
export const basicKitStatuses = ['draft', 'published', 'deprecated'] as const;

export const basicKitOutput = z.object({
  id: z.uuid(),
  name: z.string().describe("The kit's display name, from its manifest"),
  description: z.string().optional(),
  version: z.string().optional().describe('Its latest version (semver); left out before its first'),
  status: z.enum(basicKitStatuses),
  metadata: z
    .object({
      kitId: z.string(),
      kitType: z.string(),
      organizationId: z.uuid(),
      platform: z.object({ name: z.string(), category: z.string() }),
    })
    .describe('Where the kit belongs and what it is, from its manifest (read-only)'),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export const basicKitIdInput = z.object({ id: uuidInput() });

/**
 * The one thing Variant A changes on a kit: whether it is published or deprecated (organization
 * admins and owners). Its name, description, version and metadata come from its manifest: a new
 * version is published with POST /api/{orgId}/kits.
 */
export const basicKitPatchInput = z.strictObject({
  id: uuidInput(),
  status: z.enum(['published', 'deprecated']).optional().describe('deprecated marks the kit (it still runs, as do composites naming it); published takes the mark back'),
});

export const basicKitSortFields = ['createdAt', 'updatedAt', 'name'] as const;
export const basicListKitsInput = basicListInput(basicKitSortFields).prefault({});
export const basicListKitsOutput = basicListOutput(basicKitOutput);

export type BasicKit = z.infer<typeof basicKitOutput>;
