import { router } from '../../trpc/init.ts';
import { authedProcedure, publicProcedure } from '../../trpc/procedures.ts';
import { kitDetailOutput, kitRefInput, listKitsInput, listKitsOutput, publishedKitOutput, publishKitInput, setKitStatusInput } from './kits.schema.ts';
import { changeKitStatus, getKitForOrganization, listKitsForOrganization, publishKitForOrganization } from './kits.service.ts';

const tags = ['kits'];

/** Registered after the static /{orgId}/kits/… routes: `{kitId}` would otherwise swallow them. */
export const kitsRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/{orgId}/kits', tags, summary: "The organization's kits and the built-in ones" } })
    .input(listKitsInput)
    .output(listKitsOutput)
    .query(({ ctx, input }) => listKitsForOrganization(ctx.db, ctx.principal, input)),

  // Not authedProcedure: the service opens its own transactions, around the costly package check.
  publish: publicProcedure
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/{orgId}/kits', tags, summary: 'Publish a kit version: its manifest and files (admins and owners)', errorResponses: { 409: 'CONFLICT: this kit version is published already (with details.samePackage and details.published when it holds this very package: it is in place)' } } })
    .input(publishKitInput)
    .output(publishedKitOutput)
    .mutation(({ ctx, input }) => publishKitForOrganization(ctx.db, ctx.auth, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/{orgId}/kits/{kitId}', tags, summary: 'A kit with its latest manifest and versions' } })
    .input(kitRefInput)
    .output(kitDetailOutput)
    .query(({ ctx, input }) => getKitForOrganization(ctx.db, ctx.principal, input)),

  setStatus: authedProcedure
    .meta({ openapi: { method: 'PATCH', path: '/{orgId}/kits/{kitId}', tags, summary: 'Deprecate a kit, or make it active again (admins and owners)' } })
    .input(setKitStatusInput)
    .output(kitDetailOutput)
    .mutation(({ ctx, input }) => changeKitStatus(ctx.db, ctx.principal, input)),
});
