import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // An accepted invitation answers with acceptedAt, a revoked one with revokedAt, and the service
  // reads them as present: the database now holds each status to its time. Every writer has set
  // both together; a row that lost its time is given the moment of this migration, as 0013 did.
  await sql`update customer_invitations set revoked_at = now() where status = 'revoked' and revoked_at is null`.execute(db);
  await sql`update customer_invitations set accepted_at = now() where status = 'accepted' and accepted_at is null`.execute(db);
  await sql`
    alter table customer_invitations
      add constraint customer_invitations_accepted_at_check check ((status = 'accepted') = (accepted_at is not null)),
      add constraint customer_invitations_revoked_at_check check ((status = 'revoked') = (revoked_at is not null))
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table customer_invitations
      drop constraint customer_invitations_revoked_at_check,
      drop constraint customer_invitations_accepted_at_check
  `.execute(db);
}
