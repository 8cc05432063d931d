import { router } from '../../trpc/init.ts';
import { authedProcedure, publicProcedure } from '../../trpc/procedures.ts';
import { acceptInvitation, viewInvitation } from './invitation-acceptance.service.ts';
import {
  acceptedInvitationOutput,
  acceptInvitationInput,
  createdInvitationOutput,
  createInvitationInput,
  invitationTokenInput,
  listInvitationsInput,
  listInvitationsOutput,
  publicInvitationOutput,
  revokedInvitationOutput,
  revokeInvitationInput,
} from './invitations.schema.ts';
import { createInvitation, listOrganizationInvitations, revokeInvitation } from './invitations.service.ts';

const tags = ['customer invitations'];

export const customerInvitationsRouter = router({
  create: authedProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/customer-invitations',
        tags,
        summary: 'Invite an email into an organization (admin or owner); the token is shown once',
        errorResponses: { 404: 'NOT_FOUND: no such organization', 409: 'CONFLICT: a pending invitation for this email exists (details.invitationId), or the email is a member already' },
      },
    })
    .input(createInvitationInput)
    .output(createdInvitationOutput)
    .mutation(({ ctx, input }) => createInvitation(ctx.db, ctx.principal, input)),

  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/customer-invitations', tags, summary: "An organization's invitations, oldest first (admin or owner)" } })
    .input(listInvitationsInput)
    .output(listInvitationsOutput)
    .query(({ ctx, input }) => listOrganizationInvitations(ctx.db, ctx.principal, input)),

  get: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/customer-invitations/{token}', protect: false, tags, summary: 'What an invitation offers (public: the token is the credential)' } })
    .input(invitationTokenInput)
    .output(publicInvitationOutput)
    .query(({ ctx, input }) => viewInvitation(ctx.db, input.token)),

  accept: publicProcedure
    .meta({
      credentialsOptional: true,
      openapi: {
        method: 'POST',
        path: '/customer-invitations/{token}/accept',
        protect: false,
        tags,
        summary: 'Accept as a new user (name, password; public) or as the signed-in invitee (userId)',
        errorResponses: {
          400: 'VALIDATION_ERROR, or INVITE_EXPIRED: the invitation has expired',
          401: 'UNAUTHORIZED: accepting as an existing user needs its credentials',
          403: 'FORBIDDEN: the invitation is for another account',
          409: 'CONFLICT: the invitation was accepted or revoked already, the email has an account, or the caller is a member already',
        },
      },
    })
    .input(acceptInvitationInput)
    .output(acceptedInvitationOutput)
    .mutation(({ ctx, input }) => acceptInvitation(ctx.db, ctx.auth, input)),

  revoke: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/customer-invitations/{token}/revoke',
        tags,
        summary: 'Revoke an invitation by token or id (admin or owner)',
        errorResponses: {
          403: 'ORG_NOT_MEMBER or FORBIDDEN: named by token, an invitation of an organization where the caller is not an admin or owner',
          404: 'NOT_FOUND: no such invitation; also, named by id, one the caller may not revoke',
          409: 'CONFLICT: the invitation has been accepted',
        },
      },
    })
    .input(revokeInvitationInput)
    .output(revokedInvitationOutput)
    .mutation(({ ctx, input }) => revokeInvitation(ctx.db, ctx.principal, input.token)),
});
