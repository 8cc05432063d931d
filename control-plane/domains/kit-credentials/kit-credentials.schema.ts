import { z } from 'zod';
import { CREDENTIAL_SECRET_BOUND, holdsAValue, MAX_CLIENT_SEALED_CIPHERTEXT_LENGTH, MAX_CREDENTIAL_ID_LENGTH } from '../../../kit-runtime/index.ts';
import { kitIdInput, orgInput } from '../kits/kits.schema.ts';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { pagedOutput, pagingInput } from '../../http/paging.ts';
import { uuidInput } from '../../http/uuid-input.ts';

export const publicKeyOutput = z.object({ keyId: z.string(), key: z.string().describe('X25519 public key, standard base64; seal with crypto_box_seal') });

// The bound in words, for the OpenAPI document: the sealer enforces it (CredentialSealError → VALIDATION_ERROR).
const bound = `at most ${CREDENTIAL_SECRET_BOUND.values} values (strings, numbers and booleans, at any depth), ${CREDENTIAL_SECRET_BOUND.depth} levels of nesting and ${CREDENTIAL_SECRET_BOUND.bytes} bytes of JSON`;

/**
 * A whole number past 2^53 − 1 arrives already rounded (`12345678901234567890` parses as
 * 12345678901234567000): a token or PIN sent as one would be stored wrong, and fail where it is
 * used. Refused by field, never quoted (it is a secret), so the caller sends it as a string.
 */
function refuseInexactWholeNumbers(value: unknown, ctx: z.RefinementCtx, path: PropertyKey[] = []): void {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    ctx.addIssue({ code: 'custom', path, message: `is a whole number past ${Number.MAX_SAFE_INTEGER}, which JSON does not carry exactly (it would be stored rounded): send it as a string` });
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) refuseInexactWholeNumbers(child, ctx, [...path, key]);
  }
}

export const storeCredentialInput = orgInput
  .extend({
    projectId: uuidInput(),
    kitId: kitIdInput,
    credentialType: z.string().min(1).max(MAX_CREDENTIAL_ID_LENGTH).regex(/^[a-z0-9_.-]+$/, 'lowercase letters, digits, "_", "." and "-"').describe("The id of a credential the kit's manifest declares"),
    credentials: z
      .record(z.string(), z.unknown())
      .refine(holdsAValue, 'must hold at least one value: a non-empty string, a number or a boolean')
      .superRefine((secret, ctx) => refuseInexactWholeNumbers(secret, ctx))
      .optional()
      .describe(`Secret key-value pairs, sealed by the server: at least one value, ${bound}; an empty or larger secret is VALIDATION_ERROR`),
    sealedCredentials: z
      // The longest base64 of a sealed box around the largest secret within the bound.
      .strictObject({ keyId: z.string().min(1).max(64), ciphertext: z.string().min(1).max(MAX_CLIENT_SEALED_CIPHERTEXT_LENGTH) })
      .optional()
      .describe(
        `The secret JSON, sealed by the client to GET …/credentials/public-key (crypto_box_seal, base64): ${bound}. A larger box is VALIDATION_ERROR; ` +
          'the server cannot look inside, so a value within the size but beyond the rest of the bound, or holding no value, is stored, then marked invalid when a run first opens it',
      ),
  })
  .strict()
  .refine((input) => (input.credentials === undefined) !== (input.sealedCredentials === undefined), {
    message: 'send exactly one of credentials or sealedCredentials',
    path: ['credentials'],
  })
  // Every string and key at any depth, the secret's too.
  .superRefine(refuseUnstorableText);

export const storedCredentialOutput = z.object({ credentialId: z.uuid(), status: z.literal('active'), createdAt: z.iso.datetime() });

export const credentialOutput = z.object({
  id: z.uuid(),
  kitId: z.string(),
  projectId: z.uuid(),
  credentialType: z.string(),
  status: z.enum(['active', 'invalid']),
  keyId: z.string(),
  lastCheckedAt: z.iso.datetime().nullable(),
  lastCheckStatus: z.string().nullable(),
  createdAt: z.iso.datetime(),
});

export const listCredentialsInput = orgInput.extend({
  ...pagingInput.shape,
  projectId: uuidInput().describe('A project of this organization; any other project is NOT_FOUND').optional(),
  kitId: kitIdInput.describe('A kit the organization can run (its own or a built-in one); any other is NOT_FOUND').optional(),
});
export const listCredentialsOutput = pagedOutput('credentials', credentialOutput);
export const credentialRefInput = orgInput.extend({ credentialId: uuidInput() });
export const deletedCredentialOutput = z.object({ credentialId: z.uuid(), deleted: z.literal(true) });

export type StoreCredentialInput = z.infer<typeof storeCredentialInput>;
