import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // An invitation lends out its inviter's standing; since this version, removing or demoting an
  // admin revokes what they sent. Invitations sent by someone who lost that standing earlier are
  // revoked here, so their status tells the truth (accepting them is refused either way).
  await sql`
    update customer_invitations as i
       set status = 'revoked', revoked_at = now()
     where i.status = 'pending'
       and not exists (
         select 1 from organization_members as m
          where m.organization_id = i.organization_id and m.user_id = i.invited_by and m.role in ('owner', 'admin')
       )
  `.execute(db);
}

export async function down(): Promise<void> {
  // Which revocations this made cannot be told from others: nothing to undo.
}
