import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * A tenant's owner gets their first API key in the answer to the tenant's creation, which goes to
 * the platform admin who created it, not to the owner. Should that answer be lost, the owner has
 * no password and no key; a platform admin may then have a new key issued for them, but only while
 * the owner has done nothing themselves, and a key they created is something they did (through an
 * identity provider's token, they can create one without a password or a key). A key's row now
 * says whether the platform made it on the owner's behalf or its user did.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table api_keys add column issued_by_platform boolean not null default false`.execute(db);
  await markKeysIssuedWithTheirUser(db);
}

/**
 * Keys made before this column: the tenant's creation made its owner and the owner's key in one
 * transaction, named "Owner key", so both rows hold the same created_at (the transaction's start).
 * A key the user made later was made by a later transaction.
 */
export async function markKeysIssuedWithTheirUser(db: Kysely<any>): Promise<void> {
  await sql`
    update api_keys as k set issued_by_platform = true
      from users as u
      where u.tenant_id = k.tenant_id and u.id = k.user_id and k.created_at = u.created_at and k.name = 'Owner key'
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table api_keys drop column issued_by_platform`.execute(db);
}
