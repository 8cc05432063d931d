import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import {
  addMemberInput,
  changeMemberRoleInput,
  createOrganizationInput,
  listMembersInput,
  listMembersOutput,
  listOrganizationsInput,
  listOrganizationsOutput,
  memberOutput,
  memberRefInput,
  organizationIdInput,
  organizationOutput,
  removedMemberOutput,
  slugCheckInput,
  slugCheckOutput,
  updateOrganizationInput,
} from './organizations.schema.ts';
import { addOrganizationMember, changeOrganizationMemberRole, listOrganizationMembers, removeOrganizationMember } from './members.service.ts';
import { changeOrganization, checkSlug, createOrganization, getOrganization, listMyOrganizations } from './organizations.service.ts';

const tags = ['organizations'];

export const organizationsRouter = router({
  create: authedProcedure
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/organizations', tags, summary: 'Create an organization; the caller becomes its owner', errorResponses: { 409: 'SLUG_TAKEN: the slug is in use' } } })
    .input(createOrganizationInput)
    .output(organizationOutput)
    .mutation(({ ctx, input }) => createOrganization(ctx.db, ctx.principal, input)),

  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/organizations', tags, summary: 'Organizations the caller is a member of' } })
    .input(listOrganizationsInput)
    .output(listOrganizationsOutput)
    .query(({ ctx, input }) => listMyOrganizations(ctx.db, ctx.principal, input)),

  slugCheck: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/organizations/slug-check', tags, summary: 'Whether a slug is free' } })
    .input(slugCheckInput)
    .output(slugCheckOutput)
    .query(({ ctx, input }) => checkSlug(ctx.db, input.slug)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/organizations/{id}', tags, summary: 'An organization (members only)' } })
    .input(organizationIdInput)
    .output(organizationOutput)
    .query(({ ctx, input }) => getOrganization(ctx.db, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/organizations/{id}', tags, summary: 'Change name, slug, display name or settings (owner or admin)', errorResponses: { 409: 'SLUG_TAKEN: the slug is in use' } } })
    .input(updateOrganizationInput)
    .output(organizationOutput)
    .mutation(({ ctx, input }) => changeOrganization(ctx.db, ctx.principal, input)),

  members: router({
    list: authedProcedure
      .meta({ openapi: { method: 'GET', path: '/organizations/{id}/members', tags, summary: 'Members of an organization, longest-standing first' } })
      .input(listMembersInput)
      .output(listMembersOutput)
      .query(({ ctx, input }) => listOrganizationMembers(ctx.db, ctx.principal, input)),

    add: authedProcedure
      .meta({ successStatus: 201, openapi: { method: 'POST', path: '/organizations/{id}/members', tags, summary: 'Add a user of the tenant (admin or owner)', errorResponses: { 409: 'CONFLICT: the user is a member already' } } })
      .input(addMemberInput)
      .output(memberOutput)
      .mutation(({ ctx, input }) => addOrganizationMember(ctx.db, ctx.principal, input)),

    changeRole: authedProcedure
      .meta({ openapi: { method: 'PUT', path: '/organizations/{id}/members/{userId}', tags, summary: "Change a member's role (admin or owner)", errorResponses: { 409: 'CONFLICT: the last owner cannot be demoted' } } })
      .input(changeMemberRoleInput)
      .output(memberOutput)
      .mutation(({ ctx, input }) => changeOrganizationMemberRole(ctx.db, ctx.principal, input)),

    remove: authedProcedure
      .meta({ openapi: { method: 'DELETE', path: '/organizations/{id}/members/{userId}', tags, summary: 'Remove a member, or leave', errorResponses: { 409: 'CONFLICT: the last owner cannot be removed' } } })
      .input(memberRefInput)
      .output(removedMemberOutput)
      .mutation(({ ctx, input }) => removeOrganizationMember(ctx.db, ctx.principal, input)),
  }),
});
