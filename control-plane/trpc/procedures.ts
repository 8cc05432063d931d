import { requirePrincipal } from '../auth/authenticate.ts';
import { AppError, forbidden } from '../errors/app-error.ts';
import { inTenantTransaction } from '../db/tenant-transaction.ts';
import { appErrorToTrpc } from './error-mapping.ts';
import { t } from './init.ts';

/** Services throw AppErrors; they leave every procedure as tRPC errors with the right status. */
const mapDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof AppError) {
    throw appErrorToTrpc(result.error.cause);
  }
  return result;
});

export const publicProcedure = t.procedure.use(mapDomainErrors);

/**
 * Authenticated and tenant-scoped: the whole call runs in one transaction whose tenant is set,
 * so row-level security confines every statement; a failure anywhere rolls everything back,
 * jobs added through the transaction included. Queries run read-only, they cannot write, unless
 * their meta says `writes`.
 */
export const authedProcedure = publicProcedure.use(async ({ ctx, next, type, meta }) => {
  // An AppError thrown here reaches the caller through mapDomainErrors, as services' do.
  const principal = requirePrincipal(ctx.auth);
  return inTenantTransaction(ctx.db, principal.tenantId, { readOnly: type === 'query' && !meta?.writes }, async (db) => {
    const result = await next({ ctx: { principal, db } });
    if (!result.ok) throw result.error;
    return result;
  });
});

export const platformAdminProcedure = authedProcedure.use(({ ctx, next }) => {
  if (!ctx.principal.isPlatformAdmin) throw appErrorToTrpc(forbidden('This operation is reserved for platform admins'));
  return next();
});
