import { router } from '../../trpc/init.ts';
import { platformAdminProcedure } from '../../trpc/procedures.ts';
import { createdTenantOutput, createTenantInput } from './tenants.schema.ts';
import { createTenantAsPlatformAdmin } from './tenants.service.ts';

export const adminRouter = router({
  createTenant: platformAdminProcedure
    .meta({
      successStatus: 201,
      openapi: { method: 'POST', path: '/admin/tenants', tags: ['admin'], summary: 'Create a tenant with its owner and first API key (platform admins)' },
    })
    .input(createTenantInput)
    .output(createdTenantOutput)
    .mutation(({ ctx, input }) => createTenantAsPlatformAdmin(ctx.db, ctx.principal.tenantId, input)),
});
