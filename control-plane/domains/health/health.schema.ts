import { z } from 'zod';

export const healthOutput = z.object({
  status: z.enum(['ok', 'degraded']),
  database: z.object({ status: z.enum(['up', 'down']), latencyMs: z.number() }),
  worker: z.object({
    status: z.enum(['up', 'down']),
    lastHeartbeatAt: z.iso.datetime().nullable(),
  }),
  version: z.string(),
});

export type HealthReport = z.infer<typeof healthOutput>;
