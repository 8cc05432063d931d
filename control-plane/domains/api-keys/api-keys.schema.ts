import { z } from 'zod';
import { visibleName } from '../../http/visible-name.ts';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { pagedOutput, pagingInput } from '../../http/paging.ts';
import { uuidInput } from '../../http/uuid-input.ts';

export const apiKeyOutput = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string().describe('Non-secret start of the key, for telling keys apart'),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().nullable(),
  revokedAt: z.iso.datetime().nullable(),
});

export const createApiKeyInput = z
  .object({
    name: visibleName(100),
  })
  .strict()
  .superRefine(refuseUnstorableText);

export const createdApiKeyOutput = apiKeyOutput.extend({
  key: z.string().describe('The key itself. Shown once: only its hash is stored.'),
});

export const apiKeyIdInput = z.object({ keyId: uuidInput() });

/** Revoked keys stay listed (when they were revoked is history worth keeping): `status` leaves them out. */
export const listApiKeysInput = pagingInput.extend({ status: z.enum(['active', 'revoked']).optional() }).prefault({});
export const listApiKeysOutput = pagedOutput('apiKeys', apiKeyOutput);

export type ApiKey = z.infer<typeof apiKeyOutput>;
