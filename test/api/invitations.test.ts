import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { up as revokeInvitationsOfFormerAdmins } from '../../migrations/0013_revoke_invitations_of_former_admins.ts';
import { call } from '../helpers/http.ts';
import { untilLockWaiters, whileTransactionHolds } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery, withOwnerKysely } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant, ownerOfAnotherOrganization, type Actor } from '../helpers/tenant-fixtures.ts';

const PASSWORD = 'a long enough password 42';
let app: TestApp;
let owner: Actor;
let admin: Actor;
let member: Actor;
let foreign: Actor & { tenantId: string; organizationId: string };
let orgId: string;
let next = 0;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const rowCounts = async () => ({
  users: await countRows(app.database.ownerUrl, 'users'),
  members: await countRows(app.database.ownerUrl, 'organization_members'),
  invitations: await countRows(app.database.ownerUrl, "customer_invitations where status <> 'pending'"),
});
const freshEmail = (label = 'guest') => `${label}-${++next}@invitee.test`;

async function invite(body: Record<string, unknown> = {}, apiKey = admin.apiKey) {
  const response = await call(app.url, '/api/customer-invitations', { apiKey, body: { organizationId: orgId, email: freshEmail(), ...body } });
  expect(response.status, response.text).toBe(201);
  return response.body.data as { id: string; token: string; email: string };
}
/** A GET sent as written: fetch would normalise the path (a backslash becomes a slash) before sending it. */
const rawGetStatus = (path: string) =>
  new Promise<number>((resolve, reject) => {
    const { hostname, port } = new URL(app.url);
    const request = httpRequest({ host: hostname, port, path, method: 'GET' }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end();
  });
const accept = (token: string, body: unknown, apiKey?: string) =>
  call(app.url, `/api/customer-invitations/${token}/accept`, { body, ...(apiKey ? { apiKey } : {}) });

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '1000' } });
  owner = { userId: app.bootstrap.userId, apiKey: app.bootstrap.apiKey, email: 'owner@specwright.local' };
  orgId = app.bootstrap.organizationId;
  admin = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Ada');
  member = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Max');
  for (const [actor, role] of [[admin, 'admin'], [member, 'member']] as const) {
    const added = await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: owner.apiKey, body: { userId: actor.userId, role } });
    expect(added.status, added.text).toBe(201);
  }
  await sqlAsOwner("update users set name = 'Ada Admin' where id = $1", [admin.userId]);
  await sqlAsOwner("update organizations set name = 'Acme Agency', display_name = 'Acme' where id = $1", [orgId]);
  foreign = await createTenant(app, 'Foreign');
});
afterAll(() => app?.stop());

describe('POST /api/customer-invitations', () => {
  it('creates a pending 7-day invitation, returns its token once and stores only its hash', async () => {
    const email = freshEmail('new');
    const response = await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey, body: { organizationId: orgId, email, message: 'Welcome aboard' } });
    expect(response.status).toBe(201);
    const data = response.body.data;
    expect(data).toMatchObject({ id: expect.any(String), email, status: 'pending', role: 'customer', organizationId: orgId, message: 'Welcome aboard', invitedBy: { id: admin.userId, name: 'Ada Admin' } });
    expect(data.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const lifetime = Date.parse(data.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(7 * 86_400_000);
    // Both times are the database's: 7 days to the millisecond, whatever the API node's clock says.
    expect(Date.parse(data.expiresAt) - Date.parse(data.createdAt)).toBe(7 * 86_400_000);

    const [row] = await sqlAsOwner('select * from customer_invitations where id = $1', [data.id]);
    expect(row.token_hash).toBe(createHash('sha256').update(data.token).digest('hex'));
    expect(Object.values(row).map(String)).not.toContain(data.token);
    expect(row).toMatchObject({ tenant_id: app.bootstrap.tenantId, organization_id: orgId, email, role: 'customer', status: 'pending', invited_by: admin.userId });

    const listed = await call(app.url, `/api/customer-invitations?organizationId=${orgId}`, { apiKey: owner.apiKey });
    expect(listed.text).not.toContain(data.token);
  });

  it("carries the seed's invitation fields: the organization's names beside the inviter's, in the create answer and the list", async () => {
    const created = await invite();
    expect(created).toMatchObject({ organization: { name: 'Acme Agency', displayName: 'Acme' }, invitedBy: { name: 'Ada Admin' } });
    const listed = await call(app.url, `/api/customer-invitations?organizationId=${orgId}&limit=200`, { apiKey: owner.apiKey });
    const item = listed.body.data.invitations.find((i: { id: string }) => i.id === created.id);
    expect(item).toMatchObject({ organization: { name: 'Acme Agency', displayName: 'Acme' }, invitedBy: { name: 'Ada Admin' } });
  });

  it('gives the member role when asked, and no other', async () => {
    expect((await invite({ roleId: 'member' })) as unknown).toMatchObject({ role: 'member' });
    for (const roleId of ['admin', 'owner', 'superuser']) {
      const response = await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey, body: { organizationId: orgId, email: freshEmail(), roleId } });
      expect(response.status, roleId).toBe(400);
      expect(response.body.error.details.issues[0].field).toBe('roleId');
    }
  });

  it('is for organization admins and owners; others get FORBIDDEN, ORG_NOT_MEMBER or NOT_FOUND, and nothing is stored', async () => {
    const before = await countRows(app.database.ownerUrl, 'customer_invitations');
    const body = { organizationId: orgId, email: freshEmail() };
    const byMember = await call(app.url, '/api/customer-invitations', { apiKey: member.apiKey, body });
    expect([byMember.status, byMember.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const outsider = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Olga');
    const byOutsider = await call(app.url, '/api/customer-invitations', { apiKey: outsider.apiKey, body });
    expect([byOutsider.status, byOutsider.body.error.code]).toEqual([403, 'ORG_NOT_MEMBER']);
    const byForeigner = await call(app.url, '/api/customer-invitations', { apiKey: foreign.apiKey, body });
    expect([byForeigner.status, byForeigner.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const anonymous = await call(app.url, '/api/customer-invitations', { body });
    expect(anonymous.status).toBe(401);
    const bad = await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey, body: { organizationId: 'nope', email: 'not-an-email', message: 'x'.repeat(2001) } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues.map((i: { field: string }) => i.field).sort()).toEqual(['email', 'message', 'organizationId']);
    expect(await countRows(app.database.ownerUrl, 'customer_invitations')).toBe(before);
  });

  it('refuses a message with the NUL character (PostgreSQL cannot store it) by field, instead of failing with a 500', async () => {
    const before = await countRows(app.database.ownerUrl, 'customer_invitations');
    const response = await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey, body: { organizationId: orgId, email: freshEmail(), message: 'Hi\u0000there' } });
    expect([response.status, response.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(response.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(['message']);
    expect(await countRows(app.database.ownerUrl, 'customer_invitations')).toBe(before);
  });

  it('refuses a second pending invitation for the same email, and inviting a member', async () => {
    const first = await invite();
    const again = await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey, body: { organizationId: orgId, email: first.email.toUpperCase() } });
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(again.body.error.details).toMatchObject({ invitationId: first.id });
    const existingMember = await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey, body: { organizationId: orgId, email: member.email } });
    expect([existingMember.status, existingMember.body.error.code]).toEqual([409, 'CONFLICT']);
  });
});

describe('GET /api/customer-invitations/{token} (public)', () => {
  it('shows, without authentication, only what the invitee needs', async () => {
    const created = await invite({ message: 'Come and see' });
    const response = await call(app.url, `/api/customer-invitations/${created.token}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      id: created.id,
      organization: { name: 'Acme Agency', displayName: 'Acme' },
      invitedBy: { name: 'Ada Admin' },
      message: 'Come and see',
      status: 'pending',
      expiresAt: expect.any(String),
    });
    expect(response.text).not.toContain(created.email);
  });

  it('answers NOT_FOUND for an unknown token and reads expired once the time has passed', async () => {
    for (const token of ['unknown-token', 'x'.repeat(43), created43()]) {
      const response = await call(app.url, `/api/customer-invitations/${token}`);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
    const created = await invite();
    await sqlAsOwner("update customer_invitations set expires_at = now() - interval '1 minute' where id = $1", [created.id]);
    expect((await call(app.url, `/api/customer-invitations/${created.token}`)).body.data.status).toBe('expired');
  });
});

function created43(): string {
  return Buffer.alloc(32, 7).toString('base64url');
}

describe('POST /api/customer-invitations/{token}/accept', () => {
  it('as a new user: creates the user (argon2id) and the membership, and the user can sign in', async () => {
    const created = await invite({ roleId: 'customer' });
    const response = await accept(created.token, { name: 'Nina New', password: PASSWORD });
    expect(response.status, response.text).toBe(200);
    const data = response.body.data;
    expect(data).toEqual({ id: created.id, status: 'accepted', organizationId: orgId, userId: expect.any(String), role: 'customer', userCreated: true, acceptedAt: expect.any(String) });
    const [user] = await sqlAsOwner('select * from users where id = $1', [data.userId]);
    expect(user).toMatchObject({ tenant_id: app.bootstrap.tenantId, email: created.email, name: 'Nina New', is_platform_admin: false });
    expect(user.password_hash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{16,}\$[A-Za-z0-9+/]{32,}$/);
    expect(user.password_hash).not.toContain(PASSWORD);
    expect(await sqlAsOwner('select role from organization_members where organization_id = $1 and user_id = $2', [orgId, data.userId])).toEqual([{ role: 'customer' }]);
    expect(await sqlAsOwner('select status, accepted_by from customer_invitations where id = $1', [created.id])).toEqual([{ status: 'accepted', accepted_by: data.userId }]);

    const login = await call(app.url, '/api/auth/login', { body: { email: created.email, password: PASSWORD } });
    expect(login.status).toBe(200);
    const organization = await call(app.url, `/api/organizations/${orgId}`, { headers: { authorization: `Bearer ${login.body.data.accessToken}` } });
    expect(organization.status).toBe(200);

    // Single use: the token is spent.
    const again = await accept(created.token, { name: 'Someone', password: PASSWORD });
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);
    expect((await call(app.url, `/api/customer-invitations/${created.token}`)).body.data.status).toBe('accepted');
  });

  it('counts a new password in characters as typed and as hashed (code points, after NFKC), not in UTF-16 units', async () => {
    for (const [password, status] of [
      ['e\u0301'.repeat(6), 400], // 12 UTF-16 units, 6 characters once composed
      ['\u{1F511}'.repeat(12), 200], // 24 UTF-16 units, 12 characters
      ['\u{1F511}'.repeat(256), 200], // 512 UTF-16 units, 256 characters
      ['\u{1F511}'.repeat(257), 400],
    ] as const) {
      const created = await invite();
      const response = await accept(created.token, { name: 'Counted', password });
      expect(response.status, `${[...password].length} code points: ${response.text}`).toBe(status);
      if (status === 400) expect(response.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(['password']);
    }
  });

  it('refuses malformed bodies, expired and revoked invitations, and a registered email — creating nothing', async () => {
    const created = await invite();
    const before = await rowCounts();
    const cases: Array<[unknown, number, string]> = [
      [{ name: 'Short', password: 'short' }, 400, 'VALIDATION_ERROR'],
      [{}, 400, 'VALIDATION_ERROR'],
      [{ name: 'Both', password: PASSWORD, userId: member.userId }, 400, 'VALIDATION_ERROR'],
      [{ name: 'Extra', password: PASSWORD, role: 'owner' }, 400, 'VALIDATION_ERROR'],
      [{ name: 'Nul\u0000Name', password: PASSWORD }, 400, 'VALIDATION_ERROR'],
      // Sign-in refuses such a password, so an account must not be created with one.
      [{ name: 'Nul Password', password: `${PASSWORD}\u0000` }, 400, 'VALIDATION_ERROR'],
      [{ name: 'Lone Surrogate', password: `${PASSWORD}\ud800` }, 400, 'VALIDATION_ERROR'],
    ];
    for (const [body, status, code] of cases) {
      const response = await accept(created.token, body);
      expect([response.status, response.body.error.code], JSON.stringify(body)).toEqual([status, code]);
    }
    expect((await accept('no-such-token', { name: 'X', password: PASSWORD })).status).toBe(404);

    await sqlAsOwner("update customer_invitations set expires_at = now() - interval '1 second' where id = $1", [created.id]);
    const expired = await accept(created.token, { name: 'Late', password: PASSWORD });
    expect([expired.status, expired.body.error.code]).toEqual([400, 'INVITE_EXPIRED']);

    const revoked = await invite();
    expect((await call(app.url, `/api/customer-invitations/${revoked.token}/revoke`, { body: {}, apiKey: admin.apiKey })).status).toBe(200);
    const afterRevoke = await accept(revoked.token, { name: 'Too late', password: PASSWORD });
    expect([afterRevoke.status, afterRevoke.body.error.code]).toEqual([409, 'CONFLICT']);

    // The invited email already has an account (here: a user of the tenant who is not a member).
    const registered = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Rita');
    const forRegistered = await invite({ email: registered.email });
    const duplicate = await accept(forRegistered.token, { name: 'Rita Again', password: PASSWORD });
    expect([duplicate.status, duplicate.body.error.code]).toEqual([409, 'CONFLICT']);

    expect(await rowCounts()).toEqual({ ...before, users: before.users + 1, invitations: before.invitations + 1 });
    expect(await countRows(app.database.ownerUrl, 'organization_members where user_id = $1', [registered.userId])).toBe(0);
  });

  it('as an existing user: needs the caller, with the invited email, in the same tenant', async () => {
    const invitee = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Ezra');
    const created = await invite({ email: invitee.email, roleId: 'member' });

    const anonymous = await accept(created.token, { userId: invitee.userId });
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    const impostor = await accept(created.token, { userId: invitee.userId }, member.apiKey);
    expect([impostor.status, impostor.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const otherEmail = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Zoe');
    const wrongEmail = await accept(created.token, { userId: otherEmail.userId }, otherEmail.apiKey);
    expect([wrongEmail.status, wrongEmail.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect(await countRows(app.database.ownerUrl, "customer_invitations where id = $1 and status = 'pending'", [created.id])).toBe(1);

    const response = await accept(created.token, { userId: invitee.userId }, invitee.apiKey);
    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toMatchObject({ userId: invitee.userId, role: 'member', userCreated: false });
    expect(await sqlAsOwner('select role from organization_members where organization_id = $1 and user_id = $2', [orgId, invitee.userId])).toEqual([{ role: 'member' }]);
  });

  it('answers CONFLICT, not a 500, when the invitee is made a member while accepting, and leaves the invitation pending', async () => {
    const invitee = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Iris');
    const created = await invite({ email: invitee.email });
    // An admin adds the invitee directly; that transaction is still open when the accept arrives.
    const response = await whileTransactionHolds(
      app.database.ownerUrl,
      (holder) =>
        holder.query("insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')", [app.bootstrap.tenantId, orgId, invitee.userId]),
      () => accept(created.token, { userId: invitee.userId }, invitee.apiKey),
    );
    expect([response.status, response.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect(await countRows(app.database.ownerUrl, "customer_invitations where id = $1 and status = 'pending'", [created.id])).toBe(1);
    expect(await sqlAsOwner('select role from organization_members where organization_id = $1 and user_id = $2', [orgId, invitee.userId])).toEqual([{ role: 'member' }]);
  });

  it('is revoked when the invitee is added as a member directly, so it cannot bring them back after a removal', async () => {
    const invitee = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Rita');
    const created = await invite({ email: invitee.email.toUpperCase() });
    const added = await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: admin.apiKey, body: { userId: invitee.userId, role: 'member' } });
    expect(added.status, added.text).toBe(201);
    expect(await sqlAsOwner('select status from customer_invitations where id = $1', [created.id])).toEqual([{ status: 'revoked' }]);

    const removed = await call(app.url, `/api/organizations/${orgId}/members/${invitee.userId}`, { method: 'DELETE', apiKey: admin.apiKey });
    expect(removed.status, removed.text).toBe(200);
    const response = await accept(created.token, { userId: invitee.userId }, invitee.apiKey);
    expect([response.status, response.body.error?.code, response.body.error?.message]).toEqual([409, 'CONFLICT', 'The invitation has been revoked']);
    expect(await countRows(app.database.ownerUrl, 'organization_members where organization_id = $1 and user_id = $2', [orgId, invitee.userId])).toBe(0);
  });

  it('refuses a user of another tenant even with the invited email', async () => {
    const created = await invite({ email: foreign.email });
    const response = await accept(created.token, { userId: foreign.userId }, foreign.apiKey);
    expect([response.status, response.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const asNew = await accept(created.token, { name: 'Foreign Again', password: PASSWORD });
    expect([asNew.status, asNew.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(await countRows(app.database.ownerUrl, 'organization_members where user_id = $1', [foreign.userId])).toBe(1);
  });

  it('lets exactly one of several concurrent accepts succeed', async () => {
    const created = await invite();
    const responses = await Promise.all(Array.from({ length: 5 }, (_, i) => accept(created.token, { name: `Racer ${i}`, password: PASSWORD })));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    expect(await countRows(app.database.ownerUrl, 'users where lower(email) = lower($1)', [created.email])).toBe(1);
    expect(await countRows(app.database.ownerUrl, 'organization_members m join users u on u.id = m.user_id where lower(u.email) = lower($1)', [created.email])).toBe(1);
  });
});

describe("an inviter's standing", () => {
  const pendingOf = async (id: string) => (await sqlAsOwner('select status from customer_invitations where id = $1', [id]))[0].status;
  async function makeAdmin(name: string) {
    const user = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, name);
    const added = await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: owner.apiKey, body: { userId: user.userId, role: 'admin' } });
    expect(added.status, added.text).toBe(201);
    return user;
  }

  it('revokes the pending invitations an admin sent when they are removed, or leave, so none can bring anyone in after', async () => {
    const removed = await makeAdmin('Rex');
    const leaving = await makeAdmin('Lea');
    const fromRemoved = await invite({ roleId: 'member' }, removed.apiKey);
    const fromLeaving = await invite({}, leaving.apiKey);
    const fromOther = await invite();

    expect((await call(app.url, `/api/organizations/${orgId}/members/${removed.userId}`, { method: 'DELETE', apiKey: owner.apiKey })).status).toBe(200);
    expect((await call(app.url, `/api/organizations/${orgId}/members/${leaving.userId}`, { method: 'DELETE', apiKey: leaving.apiKey })).status).toBe(200);

    expect([await pendingOf(fromRemoved.id), await pendingOf(fromLeaving.id), await pendingOf(fromOther.id)]).toEqual(['revoked', 'revoked', 'pending']);
    for (const { token, email } of [fromRemoved, fromLeaving]) {
      const response = await accept(token, { name: 'Back Door', password: PASSWORD });
      expect([response.status, response.body.error?.message]).toEqual([409, 'The invitation has been revoked']);
      expect(await countRows(app.database.ownerUrl, 'users where lower(email) = lower($1)', [email])).toBe(0);
    }
  });

  it('revokes them when the inviter stops being an admin or owner, and keeps them while they still are one', async () => {
    const demoted = await makeAdmin('Dora');
    const promoted = await makeAdmin('Otto');
    const fromDemoted = await invite({}, demoted.apiKey);
    const fromPromoted = await invite({}, promoted.apiKey);
    const setRole = (userId: string, role: string) => call(app.url, `/api/organizations/${orgId}/members/${userId}`, { method: 'PUT', apiKey: owner.apiKey, body: { role } });

    expect((await setRole(promoted.userId, 'owner')).status).toBe(200);
    expect((await setRole(promoted.userId, 'admin')).status).toBe(200);
    expect(await pendingOf(fromPromoted.id)).toBe('pending');
    expect((await setRole(demoted.userId, 'member')).status).toBe(200);
    expect(await pendingOf(fromDemoted.id)).toBe('revoked');
    expect(await pendingOf(fromPromoted.id)).toBe('pending');
  });

  it('refuses at acceptance an invitation whose inviter no longer holds the standing, however they lost it', async () => {
    const former = await makeAdmin('Fay');
    const invitation = await invite({}, former.apiKey);
    // Lost without passing through the API (as before invitations were revoked with their inviter).
    await sqlAsOwner("update organization_members set role = 'member' where organization_id = $1 and user_id = $2", [orgId, former.userId]);
    const response = await accept(invitation.token, { name: 'Late Guest', password: PASSWORD });
    expect([response.status, response.body.error?.message]).toEqual([409, 'The invitation has been revoked: the person who sent it can no longer invite']);
    expect(await countRows(app.database.ownerUrl, 'users where lower(email) = lower($1)', [invitation.email])).toBe(0);

    // Migration 0013 revokes such invitations, so their status says so too; others stay pending.
    const standing = await invite();
    await withOwnerKysely(app.database.ownerUrl, revokeInvitationsOfFormerAdmins);
    const statusOf = async (id: string) => (await sqlAsOwner('select status from customer_invitations where id = $1', [id]))[0].status;
    expect([await statusOf(invitation.id), await statusOf(standing.id)]).toEqual(['revoked', 'pending']);
  });

  it('refuses an invitation from an admin whose removal is being committed at that moment, and stores none', async () => {
    const removed = await makeAdmin('Ivo');
    const email = freshEmail();
    // The removal (its lock on the organization's memberships taken, the membership deleted) is
    // still open when the admin's invitation arrives.
    const response = await whileTransactionHolds(
      app.database.ownerUrl,
      async (holder) => {
        await holder.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`organization-members:${orgId}`]);
        await holder.query('delete from organization_members where organization_id = $1 and user_id = $2', [orgId, removed.userId]);
      },
      () => call(app.url, '/api/customer-invitations', { apiKey: removed.apiKey, body: { organizationId: orgId, email } }),
    );
    expect([response.status, response.body.error?.code]).toEqual([403, 'ORG_NOT_MEMBER']);
    expect(await countRows(app.database.ownerUrl, 'customer_invitations where email = $1', [email])).toBe(0);
  });
});

describe('POST /api/customer-invitations/{token}/revoke', () => {
  it('revokes by token or by listed id (admins and owners), idempotently', async () => {
    const byToken = await invite();
    const refused = await call(app.url, `/api/customer-invitations/${byToken.token}/revoke`, { body: {}, apiKey: member.apiKey });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const response = await call(app.url, `/api/customer-invitations/${byToken.token}/revoke`, { body: {}, apiKey: admin.apiKey });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ id: byToken.id, status: 'revoked', revokedAt: expect.any(String) });
    const twice = await call(app.url, `/api/customer-invitations/${byToken.token}/revoke`, { body: {}, apiKey: owner.apiKey });
    expect(twice.body.data).toEqual(response.body.data);
    expect((await call(app.url, `/api/customer-invitations/${byToken.token}`)).body.data.status).toBe('revoked');

    const byId = await invite();
    const revokedById = await call(app.url, `/api/customer-invitations/${byId.id}/revoke`, { body: {}, apiKey: owner.apiKey });
    expect(revokedById.body.data).toMatchObject({ id: byId.id, status: 'revoked' });
  });

  it('named by id, answers whoever may not revoke it as it answers an id that does not exist; named by token, says why', async () => {
    const created = await invite();
    const outsider = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Olaf');
    const ownerElsewhere = await ownerOfAnotherOrganization(app, owner.apiKey, 'Elsa');
    const revoke = (ref: string, apiKey: string) => call(app.url, `/api/customer-invitations/${ref}/revoke`, { body: {}, apiKey });

    const callers = { member: member.apiKey, 'user of the tenant who is not a member': outsider.apiKey, 'owner of another organization': ownerElsewhere.apiKey };
    for (const [who, apiKey] of Object.entries(callers)) {
      const existing = await revoke(created.id, apiKey);
      const missing = await revoke('00000000-0000-4000-8000-000000000000', apiKey);
      expect([existing.status, existing.body.error], who).toEqual([missing.status, missing.body.error]);
      expect([existing.status, existing.body.error?.code], who).toEqual([404, 'NOT_FOUND']);
    }
    // The token's holder can see the invitation on its public page anyway: the answer may say why.
    const byToken = Object.fromEntries(await Promise.all(Object.entries(callers).map(async ([who, apiKey]) => [who, (await revoke(created.token, apiKey)).body.error?.code])));
    expect(byToken).toEqual({ member: 'FORBIDDEN', 'user of the tenant who is not a member': 'ORG_NOT_MEMBER', 'owner of another organization': 'ORG_NOT_MEMBER' });
    expect(await countRows(app.database.ownerUrl, "customer_invitations where id = $1 and status = 'pending'", [created.id])).toBe(1);
  });

  it('cannot revoke an accepted invitation, and answers NOT_FOUND to another tenant', async () => {
    const created = await invite();
    expect((await accept(created.token, { name: 'Quick', password: PASSWORD })).status).toBe(200);
    const late = await call(app.url, `/api/customer-invitations/${created.token}/revoke`, { body: {}, apiKey: admin.apiKey });
    expect([late.status, late.body.error.code]).toEqual([409, 'CONFLICT']);

    const pending = await invite();
    for (const ref of [pending.token, pending.id, 'unknown']) {
      const response = await call(app.url, `/api/customer-invitations/${ref}/revoke`, { body: {}, apiKey: foreign.apiKey });
      expect([response.status, response.body.error.code]).toEqual([404, 'NOT_FOUND']);
    }
    expect(await countRows(app.database.ownerUrl, "customer_invitations where id = $1 and status = 'pending'", [pending.id])).toBe(1);
  });
});

describe('GET /api/customer-invitations', () => {
  it("lists an organization's invitations oldest first, filtered by status, paged", async () => {
    const org = await call(app.url, '/api/organizations', { apiKey: admin.apiKey, body: { name: 'Listing', slug: `listing-${Date.now()}` } });
    const listOrg = org.body.data.id;
    const make = async () => (await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey, body: { organizationId: listOrg, email: freshEmail('list') } })).body.data;
    const [a, b, c, d] = [await make(), await make(), await make(), await make()];
    await sqlAsOwner("update customer_invitations set created_at = '2030-01-01T00:00:00Z' where id in ($1, $2, $3, $4)", [a.id, b.id, c.id, d.id]);
    await sqlAsOwner("update customer_invitations set expires_at = now() - interval '1 hour' where id = $1", [b.id]);
    await call(app.url, `/api/customer-invitations/${c.token}/revoke`, { body: {}, apiKey: admin.apiKey });
    await accept(d.token, { name: 'Lister', password: PASSWORD });

    const all = await call(app.url, `/api/customer-invitations?organizationId=${listOrg}`, { apiKey: admin.apiKey });
    expect(all.status).toBe(200);
    const sortedIds = [a.id, b.id, c.id, d.id].sort();
    expect(all.body.data.invitations.map((i: { id: string }) => i.id)).toEqual(sortedIds);
    expect(all.body.data).toMatchObject({ total: 4, limit: 50, offset: 0 });
    expect(all.text).not.toMatch(/token/i);

    const statusOf = async (status: string) =>
      (await call(app.url, `/api/customer-invitations?organizationId=${listOrg}&status=${status}`, { apiKey: admin.apiKey })).body.data.invitations.map((i: { id: string; status: string }) => `${i.id}:${i.status}`);
    expect(await statusOf('pending')).toEqual([`${a.id}:pending`]);
    expect(await statusOf('expired')).toEqual([`${b.id}:expired`]);
    expect(await statusOf('revoked')).toEqual([`${c.id}:revoked`]);
    expect(await statusOf('accepted')).toEqual([`${d.id}:accepted`]);

    const page = await call(app.url, `/api/customer-invitations?organizationId=${listOrg}&limit=2&offset=1`, { apiKey: admin.apiKey });
    expect(page.body.data.invitations.map((i: { id: string }) => i.id)).toEqual(sortedIds.slice(1, 3));
    expect(page.body.data).toMatchObject({ total: 4, limit: 2, offset: 1 });

    expect((await call(app.url, `/api/customer-invitations?organizationId=${listOrg}&status=lost`, { apiKey: admin.apiKey })).status).toBe(400);
    expect((await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey })).status).toBe(400);
    expect((await call(app.url, `/api/customer-invitations?organizationId=${orgId}`, { apiKey: member.apiKey })).status).toBe(403);
    expect((await call(app.url, `/api/customer-invitations?organizationId=${orgId}`, { apiKey: foreign.apiKey })).status).toBe(404);
  });
});

describe("an invitation's expiry", () => {
  it('is judged by one clock, the database\'s: list, public view and accept agree at the moment it passes', async () => {
    // A request judges an invitation as of its transaction's time (PostgreSQL's now()). Requests
    // held up while the invitation expires take their answers after that moment by every clock, as
    // a request does on an API node whose clock runs ahead of the database's; judged by the
    // node's clock, they would call expired what the same list files under pending.
    const org = await call(app.url, '/api/organizations', { apiKey: admin.apiKey, body: { name: 'Clocks', slug: `clocks-${Date.now()}` } });
    const clockOrg = org.body.data.id;
    const make = async (email = freshEmail('clock')) => {
      const response = await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey, body: { organizationId: clockOrg, email } });
      expect(response.status, response.text).toBe(201);
      return response.body.data as { id: string; token: string };
    };
    const invitee = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Tess');
    const [listed, viewed, accepted] = [await make(), await make(), await make(invitee.email)];
    const [{ expires_at: expiresAt }] = await sqlAsOwner("update customer_invitations set expires_at = now() + interval '2500 milliseconds' where id = any($1) returning expires_at", [
      [listed.id, viewed.id, accepted.id],
    ]);

    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    let answers;
    try {
      // Plain reads wait for the organizations table; accept waits for its invitation's row lock.
      await holder.query('begin');
      await holder.query('select 1 from customer_invitations where id = $1 for update', [accepted.id]);
      await holder.query('lock table organizations in access exclusive mode');
      const requests = Promise.all([
        call(app.url, `/api/customer-invitations?organizationId=${clockOrg}&status=pending`, { apiKey: admin.apiKey }),
        call(app.url, `/api/customer-invitations/${viewed.token}`),
        accept(accepted.token, { userId: invitee.userId }, invitee.apiKey),
      ]);
      await untilLockWaiters(app.database.ownerUrl, 3);
      while ((await sqlAsOwner('select now() <= $1 as early', [expiresAt]))[0].early) await new Promise((resolve) => setTimeout(resolve, 50));
      await holder.query('commit');
      answers = await requests;
    } finally {
      await holder.end();
    }
    const [list, view, acceptance] = answers;
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.invitations.map((i: { id: string; status: string }) => `${i.id}:${i.status}`).sort()).toEqual(
      [listed.id, viewed.id, accepted.id].map((id) => `${id}:pending`).sort(),
    );
    expect([view.status, view.body.data?.status]).toEqual([200, 'pending']);
    expect(acceptance.status, acceptance.text).toBe(200);
    const [row] = await sqlAsOwner('select status, accepted_at < expires_at as in_time from customer_invitations where id = $1', [accepted.id]);
    expect(row).toEqual({ status: 'accepted', in_time: true });

    // Asked now, all three say expired alike.
    const expiredOnes = await call(app.url, `/api/customer-invitations?organizationId=${clockOrg}&status=expired`, { apiKey: admin.apiKey });
    expect(expiredOnes.body.data.invitations.map((i: { id: string; status: string }) => `${i.id}:${i.status}`).sort()).toEqual([listed.id, viewed.id].map((id) => `${id}:expired`).sort());
    expect((await call(app.url, `/api/customer-invitations/${listed.token}`)).body.data.status).toBe('expired');
    const late = await accept(listed.token, { name: 'Late Larry', password: PASSWORD });
    expect([late.status, late.body.error?.code]).toEqual([400, 'INVITE_EXPIRED']);
  });
});

describe('secrets in logs', () => {
  it('never writes an invitation token or a password to a log line, whichever surface carried it', async () => {
    const created = await invite();
    await call(app.url, `/api/customer-invitations/${created.token}`);
    await call(app.url, `/trpc/customerInvitations.get?input=${encodeURIComponent(JSON.stringify({ token: created.token }))}`);
    // tRPC decodes its path, so a percent-encoded procedure name reaches the same procedure.
    const encoded = await call(app.url, `/trpc/customerInvitations%2Eget?input=${encodeURIComponent(JSON.stringify({ token: created.token }))}`);
    expect(encoded.status).toBe(200);
    // Routing ignores letter case: so must the log's idea of which requests are tRPC calls.
    expect((await call(app.url, `/TRPC/customerInvitations.get?input=${encodeURIComponent(JSON.stringify({ token: created.token }))}`)).status).toBe(200);
    await accept(created.token, { name: 'Quiet', password: PASSWORD });
    // A mistyped, percent-encoded path routes nowhere, but the token it carries is still good.
    await call(app.url, `/api/customer-invitation%73/${created.token}`);
    await call(app.url, `/api/%63ustomer-invitations/${created.token}/accept`, { body: {} });
    // Nor does a doubled slash before the token.
    expect((await call(app.url, `/api/customer-invitations//${created.token}`)).status).toBe(404);
    await call(app.url, `/api/Customer-Invitations///${created.token}/accept`, { body: {} });
    // A backslash, which the REST adapter reads as a slash (fetch would turn it into one first).
    expect(await rawGetStatus(`/api/customer-invitations\\${created.token}`)).toBe(200);
    // One malformed escape elsewhere in the URL must not keep the route name encoded.
    await call(app.url, `/api/customer-invitation%73/${created.token}/accept?x=%ZZ`, { body: {} });
    // A page that linked here with the token in its address.
    await call(app.url, '/api/health', { headers: { referer: `http://127.0.0.1/invite/${created.token}` } });
    const log = app.rawLog.join('\n');
    expect(log).toContain('/api/customer-invitations/[redacted]');
    expect(log).not.toContain(created.token);
    expect(log).not.toContain(PASSWORD);
  });
});
