import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import { apiKeyIdInput, apiKeyOutput, createApiKeyInput, createdApiKeyOutput, listApiKeysInput, listApiKeysOutput } from './api-keys.schema.ts';
import { issueApiKeyForCaller, listApiKeys, revokeApiKey } from './api-keys.service.ts';

const tags = ['developer settings'];

export const apiKeysRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/developer/api-keys', tags, summary: "The caller's API keys (never the keys themselves), oldest first" } })
    .input(listApiKeysInput)
    .output(listApiKeysOutput)
    .query(({ ctx, input }) => listApiKeys(ctx.db, ctx.principal, input)),

  create: authedProcedure
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/developer/api-keys', tags, summary: 'Create an API key; the key is shown once', errorResponses: { 409: 'CONFLICT: the caller holds 50 keys that are not revoked; revoke one first' } } })
    .input(createApiKeyInput)
    .output(createdApiKeyOutput)
    .mutation(({ ctx, input }) => issueApiKeyForCaller(ctx.db, ctx.principal, input.name)),

  revoke: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/developer/api-keys/{keyId}', tags, summary: 'Revoke an API key; it fails from the next request on' } })
    .input(apiKeyIdInput)
    .output(apiKeyOutput)
    .mutation(({ ctx, input }) => revokeApiKey(ctx.db, ctx.principal, input.keyId)),
});
