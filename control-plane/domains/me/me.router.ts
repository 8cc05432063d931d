import { z } from 'zod';
import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import { describeCaller } from './me.service.ts';

const meOutput = z.object({
  userId: z.uuid(),
  tenantId: z.uuid().describe('The tenant this request acts in'),
  homeTenantId: z.uuid(),
  email: z.string(),
  name: z.string(),
  isPlatformAdmin: z.boolean(),
  authenticatedBy: z.enum(['api_key', 'jwt', 'e2e_test_mode']),
});

export const meRouter = router({
  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/me', tags: ['identity'], summary: 'Who the caller is and which tenant the request acts in' } })
    .input(z.void())
    .output(meOutput)
    .query(({ ctx }) => describeCaller(ctx.db, ctx.principal)),
});
