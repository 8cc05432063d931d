import { router } from '../../trpc/init.ts';
import { platformAdminProcedure } from '../../trpc/procedures.ts';
import { z } from 'zod';
import { addJob } from '../../jobs/add-job.ts';
import { rotateCredentialKeysJob } from '../kit-credentials/rotate-credential-keys.job.ts';
import { createdTenantOutput, createTenantInput, reissuedOwnerKeyOutput, reissueOwnerKeyInput, setTenantFeaturesInput, tenantFeaturesOutput } from './tenants.schema.ts';
import { createTenantAsPlatformAdmin, reissueOwnerApiKey, setTenantFeatures } from './tenants.service.ts';

export const adminRouter = router({
  createTenant: platformAdminProcedure
    .meta({
      successStatus: 201,
      openapi: { method: 'POST', path: '/admin/tenants', tags: ['admin'], summary: 'Create a tenant with its owner and first API key (platform admins)', errorResponses: { 409: 'CONFLICT: a user with this email exists' } },
    })
    .input(createTenantInput)
    .output(createdTenantOutput)
    .mutation(({ ctx, input }) => createTenantAsPlatformAdmin(ctx.db, ctx.principal.tenantId, input)),

  reissueOwnerKey: platformAdminProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/admin/tenants/{tenantId}/owner-key',
        tags: ['admin'],
        summary: "Issue a new API key for a tenant's owner whose creation answer was lost, revoking their unused one; shown once (platform admins)",
        errorResponses: {
          404: 'NOT_FOUND: no such tenant',
          409: "CONFLICT: the owner has a password, has used an API key or has created one, or is no longer the one the tenant's creation made: they create keys themselves",
        },
      },
    })
    .input(reissueOwnerKeyInput)
    .output(reissuedOwnerKeyOutput)
    .mutation(({ ctx, input }) => reissueOwnerApiKey(ctx.db, ctx.principal, input.tenantId, ctx.log)),

  setTenantFeatures: platformAdminProcedure
    .meta({ openapi: { method: 'PATCH', path: '/admin/tenants/{tenantId}/features', tags: ['admin'], summary: "Switch a tenant's feature flags, e.g. kits_enabled (platform admins)" } })
    .input(setTenantFeaturesInput)
    .output(tenantFeaturesOutput)
    .mutation(({ ctx, input }) => {
      const { tenantId, ...changes } = input;
      return setTenantFeatures(ctx.db, ctx.principal.tenantId, tenantId, changes as Record<string, boolean>);
    }),

  rotateCredentialKeys: platformAdminProcedure
    .meta({
      successStatus: 202,
      openapi: { method: 'POST', path: '/admin/credential-keys/rotate', tags: ['admin'], summary: 'Add a credential key and re-seal every stored credential under it (runs in a worker)' },
    })
    .input(z.object({}).strict())
    .output(z.object({ jobId: z.string(), status: z.literal('queued') }))
    .mutation(async ({ ctx }) => ({
      jobId: await addJob(ctx.db, rotateCredentialKeysJob.name, { requestedBy: ctx.principal.userId }, { jobKey: 'credentials.rotate_keys', maxAttempts: 3 }),
      status: 'queued' as const,
    })),
});
