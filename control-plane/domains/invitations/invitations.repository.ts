import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { pagedRows } from '../../db/paged-rows.ts';
import type { Paging } from '../../http/paging.ts';
import type { InvitationStatus } from './invitations.schema.ts';
import { databaseNow } from '../../db/database-clock.ts';
import { emailKey, emailKeyOf } from '../../db/email-key.ts';

export interface InvitationLookup {
  invitation_id: string;
  tenant_id: string;
  organization_id: string;
}

/** Public routes know only the token: a definer function (0002) finds the tenant to work in. */
export async function findInvitationByTokenHash(db: Kysely<Database>, tokenHash: string): Promise<InvitationLookup | undefined> {
  const { rows } = await sql<InvitationLookup>`select * from app_private.find_invitation(${tokenHash})`.execute(db);
  return rows[0];
}

/**
 * The status an invitation reads as: a pending one past `expires_at` is expired. Judged by the
 * database's clock, as the list filter and the stored times are, so an API node whose clock is off
 * cannot accept an invitation that lists as expired, or refuse one that lists as pending.
 */
function effectiveStatus(table: 'i' | 'customer_invitations') {
  const column = (name: 'status' | 'expires_at') => sql.ref(`${table}.${name}`);
  return sql<InvitationStatus>`case when ${column('status')} = 'pending' and ${column('expires_at')} <= now() then 'expired' else ${column('status')} end`;
}

/** Expires `lifetimeDays` after its creation time, to the millisecond (created_at is truncated so too). */
export async function insertInvitation(
  db: Kysely<Database>,
  values: { tenantId: string; organizationId: string; email: string; role: 'customer' | 'member'; message: string | null; tokenHash: string; lifetimeDays: number; invitedBy: string },
) {
  return db
    .insertInto('customer_invitations')
    .values({
      tenant_id: values.tenantId,
      organization_id: values.organizationId,
      email: values.email,
      role: values.role,
      message: values.message,
      token_hash: values.tokenHash,
      // In hours: days would follow the session's time zone, and across a daylight-saving change
      // make the lifetime 167 or 169 hours on a server whose TimeZone is not UTC.
      expires_at: sql<Date>`${databaseNow} + make_interval(hours => ${values.lifetimeDays * 24})`,
      invited_by: values.invitedBy,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** Serialises invitation writes for one organization and email, so duplicate checks hold under races. */
export async function lockInvitee(db: Kysely<Database>, organizationId: string, email: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`invitation:${organizationId}:${emailKey(email)}`}, 0))`.execute(db);
}

/** Invitations with what the seed's invitation carries besides its own columns: the organization's names and the inviter's. */
function invitationsWithInviter(db: Kysely<Database>, tenantId: string) {
  return db
    .selectFrom('customer_invitations as i')
    .innerJoin('organizations as o', 'o.id', 'i.organization_id')
    .innerJoin('users as u', 'u.id', 'i.invited_by')
    .where('i.tenant_id', '=', tenantId)
    .select([
      'i.id',
      'i.organization_id',
      'o.name as organization_name',
      'o.display_name as organization_display_name',
      'i.email',
      'i.role',
      'i.message',
      'i.status',
      'i.expires_at',
      'i.created_at',
      'i.invited_by',
      'u.name as invited_by_name',
      'i.accepted_by',
      'i.accepted_at',
      'i.revoked_at',
      effectiveStatus('i').as('effective_status'),
    ]);
}

export type InvitationListRow = NonNullable<Awaited<ReturnType<typeof findInvitationWithInviter>>>;

export async function findInvitationWithInviter(db: Kysely<Database>, tenantId: string, id: string) {
  return invitationsWithInviter(db, tenantId).where('i.id', '=', id).executeTakeFirst();
}

export async function listInvitations(db: Kysely<Database>, tenantId: string, organizationId: string, status: InvitationStatus | undefined, paging: Paging) {
  let query = invitationsWithInviter(db, tenantId).where('i.organization_id', '=', organizationId);
  if (status) query = query.where(effectiveStatus('i'), '=', status);
  return pagedRows(query.orderBy('i.created_at').orderBy('i.id'), query.clearSelect(), paging);
}

export async function findPendingInvitation(db: Kysely<Database>, tenantId: string, organizationId: string, email: string) {
  return db
    .selectFrom('customer_invitations')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where(emailKeyOf('email'), '=', emailKey(email))
    .where('status', '=', 'pending')
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
}

function invitationWhere(db: Kysely<Database>, tenantId: string, where: { id: string } | { tokenHash: string }) {
  const query = db.selectFrom('customer_invitations').selectAll().select(effectiveStatus('customer_invitations').as('effective_status')).where('tenant_id', '=', tenantId);
  return 'id' in where ? query.where('id', '=', where.id) : query.where('token_hash', '=', where.tokenHash);
}

export type InvitationRow = NonNullable<Awaited<ReturnType<typeof findInvitation>>>;

/** An invitation as it stands, read without a lock (see acceptInvitation). */
export async function findInvitation(db: Kysely<Database>, tenantId: string, where: { id: string } | { tokenHash: string }) {
  return invitationWhere(db, tenantId, where).executeTakeFirst();
}

/** The invitation row, locked for the rest of the transaction (accept and revoke). */
export async function lockInvitation(db: Kysely<Database>, tenantId: string, where: { id: string } | { tokenHash: string }) {
  return invitationWhere(db, tenantId, where).forUpdate().executeTakeFirst();
}

export async function markAccepted(db: Kysely<Database>, tenantId: string, id: string, userId: string) {
  return db
    .updateTable('customer_invitations')
    .set({ status: 'accepted', accepted_by: userId, accepted_at: databaseNow })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(['accepted_at'])
    .executeTakeFirstOrThrow();
}

export async function markRevoked(db: Kysely<Database>, tenantId: string, id: string) {
  return db
    .updateTable('customer_invitations')
    .set({ status: 'revoked', revoked_at: databaseNow })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(['revoked_at'])
    .executeTakeFirstOrThrow();
}

/**
 * Closes the organization's pending invitations, as revoked: those to `email` (any letter case),
 * or those `invitedBy` sent — an invitation is its inviter's standing lent out, so it ends when
 * that standing does (removal, leaving, demotion). Expired ones are left as they read: they can
 * no longer be accepted, and revoking them would rewrite a lapse as an admin's withdrawal.
 */
export async function revokePendingInvitations(db: Kysely<Database>, tenantId: string, organizationId: string, which: { email: string } | { invitedBy: string }): Promise<void> {
  await db
    .updateTable('customer_invitations')
    .set({ status: 'revoked', revoked_at: databaseNow })
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where((eb) => ('email' in which ? eb(emailKeyOf('email'), '=', emailKey(which.email)) : eb('invited_by', '=', which.invitedBy)))
    .where('status', '=', 'pending')
    .where('expires_at', '>', sql<Date>`now()`)
    .execute();
}

/** What the public page shows: the organization's names and the inviter's name, nothing more. */
export async function findPublicInvitation(db: Kysely<Database>, tenantId: string, id: string) {
  return db
    .selectFrom('customer_invitations as i')
    .innerJoin('organizations as o', 'o.id', 'i.organization_id')
    .innerJoin('users as u', 'u.id', 'i.invited_by')
    .where('i.tenant_id', '=', tenantId)
    .where('i.id', '=', id)
    .select(['i.id', 'i.message', 'i.expires_at', 'o.name as organization_name', 'o.display_name as organization_display_name', 'u.name as invited_by_name'])
    .select(effectiveStatus('i').as('effective_status'))
    .executeTakeFirst();
}

export async function findUserByEmailInTenant(db: Kysely<Database>, tenantId: string, email: string) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'name'])
    .where('tenant_id', '=', tenantId)
    .where(emailKeyOf('email'), '=', emailKey(email))
    .executeTakeFirst();
}
