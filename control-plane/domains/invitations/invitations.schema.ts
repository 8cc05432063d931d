import { z } from 'zod';
import { pagedOutput, pagingInput } from '../../http/paging.ts';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { newPasswordSchema } from '../users/users.schema.ts';
import { uuidInput } from '../../http/uuid-input.ts';
import { visibleName } from '../../http/visible-name.ts';

export const INVITATION_LIFETIME_DAYS = 7;

/** The organization role an invitee receives. Permission roles (section 4.7b) come later. */
export const invitedRoleSchema = z.enum(['customer', 'member']);
export const invitationStatusSchema = z.enum(['pending', 'accepted', 'expired', 'revoked']);

/** A token as it appears in a path: anything unknown is simply not found. */
const tokenParam = z.string().min(1).max(256).describe('The invitation token');

export const createInvitationInput = z
  .object({
    organizationId: uuidInput(),
    email: z.email().max(320),
    // null is none, as the answers show an absent message.
    message: z.string().trim().max(2000).nullable().optional(),
    roleId: invitedRoleSchema.optional().describe('Organization role the invitee receives: customer (default) or member'),
  })
  .strict()
  .superRefine(refuseUnstorableText);

export const invitationOutput = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  organization: z.object({ name: z.string(), displayName: z.string().nullable() }),
  email: z.string(),
  role: invitedRoleSchema,
  message: z.string().nullable(),
  status: invitationStatusSchema,
  expiresAt: z.iso.datetime(),
  createdAt: z.iso.datetime(),
  invitedBy: z.object({ id: z.uuid(), name: z.string() }),
  acceptedBy: z.uuid().nullable(),
  acceptedAt: z.iso.datetime().nullable(),
  revokedAt: z.iso.datetime().nullable(),
});

export const createdInvitationOutput = invitationOutput.extend({
  token: z.string().describe('The invitation token. Returned only here: only its hash is stored.'),
});

export const listInvitationsInput = pagingInput.extend({
  organizationId: uuidInput(),
  status: invitationStatusSchema.optional(),
});
export const listInvitationsOutput = pagedOutput('invitations', invitationOutput);

export const invitationTokenInput = z.object({ token: tokenParam });

export const publicInvitationOutput = z.object({
  id: z.uuid(),
  organization: z.object({ name: z.string(), displayName: z.string().nullable() }),
  invitedBy: z.object({ name: z.string() }),
  message: z.string().nullable(),
  status: invitationStatusSchema,
  expiresAt: z.iso.datetime(),
});

/** Either a new user (name, password) or an existing one (userId, the caller); never both. */
export const acceptInvitationInput = z
  .object({
    token: tokenParam,
    name: visibleName(200).superRefine(refuseUnstorableText).optional(),
    password: newPasswordSchema.optional(),
    userId: uuidInput().optional(),
  })
  .strict()
  .superRefine((input, ctx) => {
    const asNewUser = input.name !== undefined || input.password !== undefined;
    if (input.userId !== undefined && asNewUser) {
      ctx.addIssue({ code: 'custom', path: ['userId'], message: 'send either userId (existing user) or name and password (new user), not both' });
    } else if (input.userId === undefined) {
      if (input.name === undefined) ctx.addIssue({ code: 'custom', path: ['name'], message: 'a new user needs a name (or send userId as an existing user)' });
      if (input.password === undefined) ctx.addIssue({ code: 'custom', path: ['password'], message: 'a new user needs a password (or send userId as an existing user)' });
    }
  });

export const acceptedInvitationOutput = z.object({
  id: z.uuid(),
  status: z.literal('accepted'),
  organizationId: z.uuid(),
  userId: z.uuid(),
  role: invitedRoleSchema,
  userCreated: z.boolean().describe('Whether the accept created the user'),
  acceptedAt: z.iso.datetime(),
});

/** Strict like every other body: a field it does not take (`{"dryRun": true}`) is refused, not ignored. */
export const revokeInvitationInput = z
  .object({
    token: z.string().min(1).max(256).describe('The invitation token, or its id as listed'),
  })
  .strict();

export const revokedInvitationOutput = z.object({
  id: z.uuid(),
  status: z.literal('revoked'),
  revokedAt: z.iso.datetime(),
});

export type Invitation = z.infer<typeof invitationOutput>;
export type InvitationStatus = z.infer<typeof invitationStatusSchema>;
export type AcceptInvitationInput = z.infer<typeof acceptInvitationInput>;
