import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import { orgInput } from '../kits/kits.schema.ts';
import {
  credentialRefInput,
  deletedCredentialOutput,
  listCredentialsInput,
  listCredentialsOutput,
  publicKeyOutput,
  storeCredentialInput,
  storedCredentialOutput,
} from './kit-credentials.schema.ts';
import { getCredentialPublicKey, listKitCredentials, removeCredential, storeCredential } from './kit-credentials.service.ts';

const tags = ['kit credentials'];

export const kitCredentialsRouter = router({
  publicKey: authedProcedure
    .meta({ writes: true, openapi: { method: 'GET', path: '/{orgId}/kits/credentials/public-key', tags, summary: "The organization's key clients seal credentials to ({keyId, key})" } })
    .input(orgInput)
    .output(publicKeyOutput)
    .query(({ ctx, input }) => getCredentialPublicKey(ctx.db, ctx.credentialKeys, ctx.principal, input.orgId)),

  store: authedProcedure
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/{orgId}/kits/credentials', tags, summary: 'Store a credential for a kit and project, sealed (admins and owners)' } })
    .input(storeCredentialInput)
    .output(storedCredentialOutput)
    .mutation(({ ctx, input }) => storeCredential(ctx.db, ctx.credentialKeys, ctx.principal, input)),

  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/{orgId}/kits/credentials', tags, summary: 'Stored credentials, never their secrets' } })
    .input(listCredentialsInput)
    .output(listCredentialsOutput)
    .query(({ ctx, input }) => listKitCredentials(ctx.db, ctx.principal, input)),

  delete: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/{orgId}/kits/credentials/{credentialId}', tags, summary: 'Delete a stored credential (admins and owners)' } })
    .input(credentialRefInput)
    .output(deletedCredentialOutput)
    .mutation(({ ctx, input }) => removeCredential(ctx.db, ctx.principal, input)),
});
