import { z } from 'zod';
import { pagingInput, pagedOutput } from '../../http/paging.ts';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { uuidInput } from '../../http/uuid-input.ts';
import { visibleName } from '../../http/visible-name.ts';

export const slugSchema = z
  .string()
  .min(3, 'a slug has at least 3 characters')
  .max(63, 'a slug has at most 63 characters')
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'a slug is lowercase letters, digits and single hyphens, starting and ending with a letter or digit');

/** What RFC 3986 lets a URI hold as is; anything else (a quote, `<`, a space, a non-ASCII letter) is percent-encoded. */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;

const onlyIfValid = (payload: { issues: readonly unknown[] }) => payload.issues.length === 0;
/** NUL and unpaired surrogates are named by refuseUnstorableText, as in every other field: one message is enough. */
const isUnstorable = (text: string) => text.includes('\u0000') || !text.isWellFormed();

/** The longest logo address taken (the OpenAPI document's maxLength). */
const MAX_LOGO_LENGTH = 2048;

/**
 * A logo is shown in browsers, to everyone who sees the organization (customers too): only a web
 * address, never `javascript:` or `data:`; none of the raw characters that end an HTML attribute
 * the address is written into; and no user name or password (`https://trusted.example@evil.example`
 * reads as another host, and credentials put there are shown to every viewer).
 */
const logoSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  // Its own message: the error given to z.url() above is the schema's, so every check without one
  // said it (a 2,049-character https address was told "must be an http(s) URL").
  .max(MAX_LOGO_LENGTH, { error: `must be at most ${MAX_LOGO_LENGTH} characters` })
  // Checked only on an http(s) URL, so a bad one is told once.
  .refine((logo) => URI_CHARACTERS.test(logo) || isUnstorable(logo), { error: 'must have every character RFC 3986 does not allow in a URL percent-encoded (quotes, <, >, spaces, non-ASCII)', when: onlyIfValid })
  .refine((logo) => !URL.parse(logo)?.username && !URL.parse(logo)?.password, { error: 'must not carry a user name or password', when: onlyIfValid });

export const organizationSettingsSchema = z
  .object({
    theme: z.string().max(50).optional(),
    branding: z.object({ logo: logoSchema.optional() }).strict().optional(),
  })
  .strict();

export const organizationRoleSchema = z.enum(['owner', 'admin', 'member']);
export const memberRoleSchema = z.enum(['owner', 'admin', 'member', 'customer']);

export const createOrganizationInput = z
  .object({
    name: visibleName(200),
    slug: slugSchema,
    // null as an answer shows "none" (and as PUT takes it), so a create may send it too.
    displayName: visibleName(200).nullable().optional(),
    settings: organizationSettingsSchema.optional(),
  })
  .strict()
  .superRefine(refuseUnstorableText);

export const updateOrganizationInput = z
  .object({
    id: uuidInput(),
    name: visibleName(200).optional(),
    slug: slugSchema.optional(),
    displayName: visibleName(200).nullable().optional(),
    settings: organizationSettingsSchema.optional(),
  })
  .strict()
  .superRefine(refuseUnstorableText);

export const organizationOutput = z.object({
  id: z.uuid(),
  tenantId: z.uuid(),
  name: z.string(),
  slug: z.string(),
  displayName: z.string().nullable(),
  ownerId: z.uuid(),
  settings: z.record(z.string(), z.unknown()),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export const organizationIdInput = z.object({ id: uuidInput() });
// Every field has a default, so a call may send no input at all.
export const listOrganizationsInput = pagingInput.prefault({});
export const listOrganizationsOutput = pagedOutput('organizations', organizationOutput);

export const slugCheckInput = z.object({ slug: slugSchema });
export const slugCheckOutput = z.object({ slug: z.string(), available: z.boolean() });

export const memberOutput = z.object({
  id: z.uuid(),
  userId: z.uuid(),
  role: memberRoleSchema,
  joinedAt: z.iso.datetime(),
  user: z.object({ name: z.string(), email: z.string() }),
});

export const addMemberInput = z.object({ id: uuidInput(), userId: uuidInput(), role: organizationRoleSchema }).strict();
export const changeMemberRoleInput = z.object({ id: uuidInput(), userId: uuidInput(), role: organizationRoleSchema }).strict();
export const memberRefInput = z.object({ id: uuidInput(), userId: uuidInput() });
export const listMembersInput = organizationIdInput.extend(pagingInput.shape);
export const listMembersOutput = pagedOutput('members', memberOutput);
export const removedMemberOutput = z.object({ removed: z.literal(true), userId: z.uuid() });

export type Organization = z.infer<typeof organizationOutput>;
export type Member = z.infer<typeof memberOutput>;
export type OrganizationSettings = z.infer<typeof organizationSettingsSchema>;
