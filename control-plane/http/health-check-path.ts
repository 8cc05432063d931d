import { trpcProceduresOf } from './trpc-path.ts';

/**
 * Whether a request path is the public health check, spelt any way the routers take it: express
 * ignores letter case in its mounts, and `/api/health/` routes as `/api/health` does. A probe
 * configured with any of these must get the same bounded answer ("database: down"), not a 503.
 */
export function isHealthCheckPath(path: string): boolean {
  return /^\/api\/health\/?$/i.test(path) || trpcProceduresOf(path) === 'health.check';
}
