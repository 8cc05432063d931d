import { z } from 'zod';
import { router } from '../../trpc/init.ts';
import { publicProcedure } from '../../trpc/procedures.ts';
import { healthOutput } from './health.schema.ts';
import { checkHealth } from './health.service.ts';
import { SERVICE_VERSION } from '../../version.ts';

export const healthRouter = router({
  check: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/health', protect: false, tags: ['health'], summary: 'Database and worker status (public)' } })
    .input(z.void())
    .output(healthOutput)
    .query(({ ctx }) => checkHealth(ctx.db, SERVICE_VERSION, ctx.config.workerStaleAfterMs)),
});
