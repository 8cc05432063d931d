import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import { basicKitIdInput, basicKitOutput, basicKitPatchInput, basicListKitsInput, basicListKitsOutput } from './kits.basic-schema.ts';
import { getBasicKit, listBasicKits, setBasicKitStatus } from './kits.basic-service.ts';

const tags = ['kits'];
const flagOff = { 403: 'FORBIDDEN: kits are not enabled for the tenant (kits_enabled)' };
const flagOffOrNoAdmin = { 403: 'FORBIDDEN: kits are not enabled for the tenant (kits_enabled), or the caller is a member but no admin or owner of the kit’s organization' };
const notTheirs = { 404: "NOT_FOUND: no kit of an organization the caller is an owner, admin or member of has this id (a built-in kit, another organization's, or none)" };

/**
 * Variant A's /kits (served under /api/basic): read and published ⇔ deprecated. Publishing a kit
 * takes its manifest and files, which A's Kit has no place for: that is POST /api/{orgId}/kits.
 */
export const basicKitsRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/kits', tags, summary: "Kits of the caller's organizations (no built-in kit), a page at a time", errorResponses: flagOff } })
    .input(basicListKitsInput)
    .output(basicListKitsOutput)
    .query(({ ctx, input }) => listBasicKits(ctx.db, ctx.principal, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/kits/{id}', tags, summary: 'A kit of one of your organizations', errorResponses: { ...flagOff, ...notTheirs } } })
    .input(basicKitIdInput)
    .output(basicKitOutput)
    .query(({ ctx, input }) => getBasicKit(ctx.db, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ openapi: { method: 'PATCH', path: '/kits/{id}', tags, summary: 'Publish or deprecate a kit (admins and owners of its organization)', errorResponses: { ...flagOffOrNoAdmin, ...notTheirs } } })
    .input(basicKitPatchInput)
    .output(basicKitOutput)
    .mutation(({ ctx, input }) => setBasicKitStatus(ctx.db, ctx.principal, input)),
});
