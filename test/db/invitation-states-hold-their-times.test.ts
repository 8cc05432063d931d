import { beforeAll, describe, expect, it } from 'vitest';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * An invitation's answer carries acceptedAt for an accepted one and revokedAt for a revoked one; the
 * service reads them as present (a revoke of a revoked invitation answers its stored revoked_at).
 * The database holds the pairing itself, so no code path can store a revoked invitation without
 * the time it was revoked, which would answer 500 for ever after.
 */
let database: TestDatabase;
let invitationId: string;
const sql = (text: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, text, values);

beforeAll(async () => {
  database = await createTestDatabase();
  const [tenant] = await sql(`insert into tenants (name) values ('t') returning id`);
  const [user] = await sql(`insert into users (tenant_id, email, name) values ($1, 'u@example.test', 'u') returning id`, [tenant.id]);
  const [organization] = await sql(`insert into organizations (tenant_id, name, slug, owner_id) values ($1, 'o', 'org-o', $2) returning id`, [tenant.id, user.id]);
  const [invitation] = await sql(
    `insert into customer_invitations (tenant_id, organization_id, email, token_hash, expires_at, invited_by) values ($1, $2, 'c@example.test', 'h', now() + interval '7 days', $3) returning id`,
    [tenant.id, organization.id, user.id],
  );
  invitationId = invitation.id;
});

/** The SQLSTATE `text` fails with, or undefined; nothing it does is kept. */
async function refusal(text: string): Promise<string | undefined> {
  try {
    await sql(`begin; ${text}; rollback`);
    return undefined;
  } catch (error) {
    return (error as { code: string }).code;
  }
}

describe('an invitation', () => {
  it('cannot be revoked or accepted without the time it was', async () => {
    expect(await refusal(`update customer_invitations set status = 'revoked' where id = '${invitationId}'`)).toBe('23514');
    expect(await refusal(`update customer_invitations set status = 'accepted' where id = '${invitationId}'`)).toBe('23514');
  });

  it('cannot hold such a time while pending', async () => {
    expect(await refusal(`update customer_invitations set revoked_at = now() where id = '${invitationId}'`)).toBe('23514');
    expect(await refusal(`update customer_invitations set accepted_at = now() where id = '${invitationId}'`)).toBe('23514');
  });

  it('moves as the service moves it: revoked with its time, or accepted with its time', async () => {
    expect(await refusal(`update customer_invitations set status = 'revoked', revoked_at = now() where id = '${invitationId}'`)).toBeUndefined();
    expect(await refusal(`update customer_invitations set status = 'accepted', accepted_at = now() where id = '${invitationId}'`)).toBeUndefined();
  });
});
