import { z } from 'zod';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { uuidInput } from '../../http/uuid-input.ts';
import { visibleName } from '../../http/visible-name.ts';
import { createdApiKeyOutput } from '../api-keys/api-keys.schema.ts';

/** The longest owner name, given or taken from the owner's email. */
export const MAX_OWNER_NAME_CHARACTERS = 200;

export const createTenantInput = z
  .strictObject({
    name: visibleName(200),
    ownerEmail: z.email().max(320),
    ownerName: visibleName(MAX_OWNER_NAME_CHARACTERS).optional(),
  })
  .superRefine(refuseUnstorableText);

export const createdTenantOutput = z.object({
  tenantId: z.uuid(),
  organizationId: z.uuid(),
  userId: z.uuid(),
  apiKey: z.string().describe("The owner's first API key. Shown once."),
});

export type CreateTenantInput = z.infer<typeof createTenantInput>;
export type CreatedTenant = z.infer<typeof createdTenantOutput>;

export const setTenantFeaturesInput = z.strictObject({
  tenantId: uuidInput(),
  kits_enabled: z.boolean().optional(),
});

export const tenantFeaturesOutput = z.object({ tenantId: z.uuid(), features: z.record(z.string(), z.boolean()) });

export const reissueOwnerKeyInput = z.strictObject({ tenantId: uuidInput() });

/** A developer key creation's answer (what GET /developer/api-keys will list, plus the key), and whose key it is. */
export const reissuedOwnerKeyOutput = createdApiKeyOutput.extend({
  tenantId: z.uuid(),
  userId: z.uuid().describe("The tenant's owner, whose key this is"),
});

export type ReissuedOwnerKey = z.infer<typeof reissuedOwnerKeyOutput>;
