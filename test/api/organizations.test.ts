import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { whileTransactionHolds } from '../helpers/lock-holder.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';

let app: TestApp;
let owner: Actor;
let admin: Actor;
let member: Actor;
let outsider: Actor;
let orgId: string;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const membersOf = async (id: string) => (await sqlAsOwner('select user_id, role from organization_members where organization_id = $1 order by joined_at, id', [id])).map((r) => `${r.role}`);

beforeAll(async () => {
  // The concurrency tests below send bursts of requests.
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  owner = { userId: app.bootstrap.userId, apiKey: app.bootstrap.apiKey, email: 'owner@specwright.local' };
  admin = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Ada');
  member = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Max');
  outsider = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Olga');
  const created = await call(app.url, '/api/organizations', {
    apiKey: owner.apiKey,
    body: { name: 'Acme Agency', slug: 'acme-agency', displayName: 'Acme', settings: { theme: 'dark', branding: { logo: 'https://cdn.example/logo.png' } } },
  });
  expect(created.status, created.text).toBe(201);
  orgId = created.body.data.id;
  expect((await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: owner.apiKey, body: { userId: admin.userId, role: 'admin' } })).status).toBe(201);
  expect((await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: owner.apiKey, body: { userId: member.userId, role: 'member' } })).status).toBe(201);
});
afterAll(() => app?.stop());

describe('organizations', () => {
  it('are created with the caller as owner and read back by members', async () => {
    const response = await call(app.url, `/api/organizations/${orgId}`, { apiKey: member.apiKey });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: orgId, tenantId: app.bootstrap.tenantId, name: 'Acme Agency', slug: 'acme-agency', ownerId: owner.userId, settings: { theme: 'dark' } });
    const listed = await call(app.url, '/api/organizations', { apiKey: member.apiKey });
    expect(listed.body.data).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(listed.body.data.organizations.map((o: { id: string }) => o.id)).toEqual([orgId]);
  });

  it('answer ORG_NOT_MEMBER to a non-member of the same tenant, NOT_FOUND to another tenant', async () => {
    const stranger = await call(app.url, `/api/organizations/${orgId}`, { apiKey: outsider.apiKey });
    expect(stranger.status).toBe(403);
    expect(stranger.body.error.code).toBe('ORG_NOT_MEMBER');
    const other = await createTenant(app);
    const foreign = await call(app.url, `/api/organizations/${orgId}`, { apiKey: other.apiKey });
    expect(foreign.status).toBe(404);
  });

  it("are founded by members, admins and owners only: a customer, or a user no organization holds, gets FORBIDDEN and founds nothing", async () => {
    const customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Cora');
    const agency = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: "Cora's agency", slug: 'coras-agency' } });
    expect(agency.status, agency.text).toBe(201);
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, agency.body.data.id, customer.userId]);
    const before = await countRows(app.database.ownerUrl, 'organizations');
    for (const [who, actor] of [['a customer', customer], ['a user of no organization', outsider]] as const) {
      const founded = await call(app.url, '/api/organizations', { apiKey: actor.apiKey, body: { name: 'Own shop', slug: `own-shop-${actor.userId.slice(0, 8)}` } });
      expect([founded.status, founded.body.error?.code], who).toEqual([403, 'FORBIDDEN']);
    }
    expect(await countRows(app.database.ownerUrl, 'organizations')).toBe(before);
    const byMember = await call(app.url, '/api/organizations', { apiKey: member.apiKey, body: { name: 'Side project', slug: 'members-side-project' } });
    expect(byMember.status, byMember.text).toBe(201);
  });

  it('bound slugs to 3-63 characters, refuse a taken one on update too, and answer SLUG_TAKEN to a create that meets one not yet committed', async () => {
    for (const [slug, status] of [['ab', 400], ['a'.repeat(64), 400], ['abc', 201], ['b'.repeat(63), 201]] as const) {
      const response = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Bounds', slug } });
      expect(response.status, `${slug.length} characters: ${response.text}`).toBe(status);
    }
    const renamed = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: owner.apiKey, body: { slug: 'abc', name: 'Not applied' } });
    expect([renamed.status, renamed.body.error?.code]).toEqual([409, 'SLUG_TAKEN']);
    expect((await call(app.url, `/api/organizations/${orgId}`, { apiKey: owner.apiKey })).body.data).toMatchObject({ slug: 'acme-agency', name: 'Acme Agency' });
    // Another transaction has inserted the slug and not committed: the create waits for it, then loses cleanly.
    const raced = await whileTransactionHolds(
      app.database.ownerUrl,
      (holder) => holder.query(`insert into organizations (tenant_id, name, slug, owner_id) values ($1, 'Held', 'held-slug', $2)`, [app.bootstrap.tenantId, owner.userId]),
      () => call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Second', slug: 'held-slug' } }),
    );
    expect([raced.status, raced.body.error?.code]).toEqual([409, 'SLUG_TAKEN']);
    expect(await sqlAsOwner(`select name from organizations where slug = 'held-slug'`)).toEqual([{ name: 'Held' }]);
  });

  it('validate slugs and refuse a taken one with SLUG_TAKEN, also when two creates race', async () => {
    const bad = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'X', slug: 'Bad_Slug' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].field).toBe('slug');
    const taken = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'X', slug: 'acme-agency' } });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('SLUG_TAKEN');
    expect((await call(app.url, '/api/organizations/slug-check?slug=acme-agency', { apiKey: owner.apiKey })).body.data).toEqual({ slug: 'acme-agency', available: false });
    expect((await call(app.url, '/api/organizations/slug-check?slug=fresh-one', { apiKey: owner.apiKey })).body.data).toEqual({ slug: 'fresh-one', available: true });
    expect((await call(app.url, '/api/organizations/slug-check?slug=NO', { apiKey: owner.apiKey })).status).toBe(400);

    const before = await countRows(app.database.ownerUrl, 'organizations');
    const racers = await Promise.all([1, 2, 3].map(() => call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Race', slug: 'race-slug' } })));
    expect(racers.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect(racers.filter((r) => r.status === 409).every((r) => r.body.error.code === 'SLUG_TAKEN')).toBe(true);
    expect(await countRows(app.database.ownerUrl, 'organizations')).toBe(before + 1);
    // A taken slug is taken in every tenant.
    const other = await createTenant(app);
    expect((await call(app.url, '/api/organizations', { apiKey: other.apiKey, body: { name: 'Y', slug: 'acme-agency' } })).body.error.code).toBe('SLUG_TAKEN');
  });

  it('refuse text PostgreSQL cannot store (NUL, unpaired surrogates) by field, instead of failing with a 500, and change nothing', async () => {
    const before = await countRows(app.database.ownerUrl, 'organizations');
    const creates: Array<[Record<string, unknown>, string]> = [
      [{ name: 'Nul\u0000Co', slug: 'nul-co' }, 'name'],
      [{ name: 'Nul Co', slug: 'nul-co', displayName: 'Nul\u0000' }, 'displayName'],
      [{ name: 'Nul Co', slug: 'nul-co', settings: { theme: 'dark\u0000' } }, 'settings.theme'],
      [{ name: 'Nul Co', slug: 'nul-co', settings: { branding: { logo: 'https://cdn.example/a\u0000.png' } } }, 'settings.branding.logo'],
      // An unpaired surrogate, which jsonb refuses just the same.
      [{ name: 'Nul Co', slug: 'nul-co', settings: { theme: 'dark\ud800' } }, 'settings.theme'],
    ];
    for (const [body, field] of creates) {
      const response = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body });
      expect([response.status, response.body.error?.code], JSON.stringify(body)).toEqual([400, 'VALIDATION_ERROR']);
      expect(response.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual([field]);
    }
    expect(await countRows(app.database.ownerUrl, 'organizations')).toBe(before);
    const [row] = await sqlAsOwner('select name, display_name, updated_at from organizations where id = $1', [orgId]);
    const update = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: owner.apiKey, body: { displayName: 'Acme\u0000' } });
    expect([update.status, update.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(update.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(['displayName']);
    expect(await sqlAsOwner('select name, display_name, updated_at from organizations where id = $1', [orgId])).toEqual([row]);
  });

  it('take a logo only as an http(s) URL, never a script or data URL, and change nothing otherwise', async () => {
    const [row] = await sqlAsOwner('select settings, updated_at from organizations where id = $1', [orgId]);
    for (const logo of ['javascript:alert(document.cookie)', 'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=', 'file:///etc/passwd', 'vbscript:msgbox(1)']) {
      const created = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Logo Co', slug: 'logo-co', settings: { branding: { logo } } } });
      expect([created.status, created.body.error?.details?.issues], logo).toEqual([400, [{ field: 'settings.branding.logo', issue: 'must be an http(s) URL' }]]);
      const updated = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: owner.apiKey, body: { settings: { branding: { logo } } } });
      expect(updated.status, logo).toBe(400);
    }
    expect(await sqlAsOwner('select settings, updated_at from organizations where id = $1', [orgId])).toEqual([row]);
    expect(await countRows(app.database.ownerUrl, `organizations where slug = 'logo-co'`)).toBe(0);
  });

  it('take a logo only as a plain URL: no raw quote, angle bracket or space to end an HTML attribute, no user name or password', async () => {
    const [row] = await sqlAsOwner('select settings, updated_at from organizations where id = $1', [orgId]);
    for (const logo of ['https://cdn.example/logo.png"onerror="alert(1)', 'https://cdn.example/<script>.png', 'https://cdn.example/my logo.png', 'https://cdn.example@evil.example/logo.png', 'https://user:secret@cdn.example/logo.png']) {
      const created = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Logo Co', slug: 'logo-co', settings: { branding: { logo } } } });
      expect([created.status, created.body.error?.details?.issues?.map((issue: { field: string }) => issue.field)], logo).toEqual([400, ['settings.branding.logo']]);
      const updated = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: owner.apiKey, body: { settings: { branding: { logo } } } });
      expect([updated.status, updated.body.error?.code], logo).toEqual([400, 'VALIDATION_ERROR']);
    }
    expect(await sqlAsOwner('select settings, updated_at from organizations where id = $1', [orgId])).toEqual([row]);
    expect(await countRows(app.database.ownerUrl, `organizations where slug = 'logo-co'`)).toBe(0);
    // Percent-encoded, the same addresses are fine.
    const encoded = 'https://cdn.example/my%20logo.png?v=%221%22';
    const created = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Logo Co', slug: 'logo-co', settings: { branding: { logo: encoded } } } });
    expect([created.status, created.body.data?.settings], created.text).toEqual([201, { branding: { logo: encoded } }]);
  });

  it('take a logo of up to 2048 characters, as the document says, and tell a longer http(s) URL its length, not that it is no URL', async () => {
    const logoOf = (length: number) => `https://cdn.example/${'l'.repeat(length - 'https://cdn.example/'.length)}`;
    const [row] = await sqlAsOwner('select settings, updated_at from organizations where id = $1', [orgId]);
    const tooLong = [400, [{ field: 'settings.branding.logo', issue: 'must be at most 2048 characters' }]];
    const created = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Long Logo', slug: 'long-logo', settings: { branding: { logo: logoOf(2049) } } } });
    expect([created.status, created.body.error?.details?.issues]).toEqual(tooLong);
    const updated = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: owner.apiKey, body: { settings: { branding: { logo: logoOf(2049) } } } });
    expect([updated.status, updated.body.error?.details?.issues]).toEqual(tooLong);
    const trpc = await call(app.url, '/trpc/organizations.create', { apiKey: owner.apiKey, body: { name: 'Long Logo', slug: 'long-logo', settings: { branding: { logo: logoOf(2049) } } } });
    expect([trpc.status, trpc.body.error?.data?.details?.issues]).toEqual(tooLong);
    expect(await sqlAsOwner('select settings, updated_at from organizations where id = $1', [orgId])).toEqual([row]);
    expect(await countRows(app.database.ownerUrl, `organizations where slug = 'long-logo'`)).toBe(0);
    // At the bound it is taken and kept as sent.
    const atBound = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Long Logo', slug: 'long-logo', settings: { branding: { logo: logoOf(2048) } } } });
    expect([atBound.status, atBound.body.data?.settings], atBound.text).toEqual([201, { branding: { logo: logoOf(2048) } }]);
    expect((await sqlAsOwner(`select settings from organizations where slug = 'long-logo'`))[0].settings).toEqual({ branding: { logo: logoOf(2048) } });
  });

  it('are changed by owners and admins only', async () => {
    const byMember = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: member.apiKey, body: { name: 'Hijacked' } });
    expect(byMember.status).toBe(403);
    const byAdmin = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: admin.apiKey, body: { displayName: 'Acme & Co' } });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.data).toMatchObject({ displayName: 'Acme & Co', name: 'Acme Agency' });
    const [row] = await sqlAsOwner('select name, display_name from organizations where id = $1', [orgId]);
    expect(row).toEqual({ name: 'Acme Agency', display_name: 'Acme & Co' });
    const unknownField = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: admin.apiKey, body: { ownerId: admin.userId } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.details.issues[0].field).toBe('ownerId');
  });
});

describe('members', () => {
  it('are listed with their user', async () => {
    const response = await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: member.apiKey });
    expect(response.body.data.members.map((m: { role: string }) => m.role)).toEqual(['owner', 'admin', 'member']);
    expect(response.body.data.members[1]).toMatchObject({ userId: admin.userId, user: { name: 'Ada', email: admin.email } });
  });

  it('are added by admins or owners only, once', async () => {
    expect((await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: member.apiKey, body: { userId: outsider.userId, role: 'member' } })).status).toBe(403);
    expect((await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: admin.apiKey, body: { userId: outsider.userId, role: 'owner' } })).status).toBe(403);
    expect((await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: admin.apiKey, body: { userId: member.userId, role: 'member' } })).status).toBe(409);
    const foreignUser = await createTenant(app);
    expect((await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: admin.apiKey, body: { userId: foreignUser.userId, role: 'member' } })).status).toBe(404);
    expect(await membersOf(orgId)).toEqual(['owner', 'admin', 'member']);
  });

  it('cannot raise their own role, and the last owner cannot be demoted or removed', async () => {
    const raise = await call(app.url, `/api/organizations/${orgId}/members/${admin.userId}`, { method: 'PUT', apiKey: admin.apiKey, body: { role: 'owner' } });
    expect(raise.status).toBe(403);
    const demoteLast = await call(app.url, `/api/organizations/${orgId}/members/${owner.userId}`, { method: 'PUT', apiKey: owner.apiKey, body: { role: 'admin' } });
    expect(demoteLast.status).toBe(409);
    const removeLast = await call(app.url, `/api/organizations/${orgId}/members/${owner.userId}`, { method: 'DELETE', apiKey: owner.apiKey });
    expect(removeLast.status).toBe(409);
    const byAdmin = await call(app.url, `/api/organizations/${orgId}/members/${owner.userId}`, { method: 'DELETE', apiKey: admin.apiKey });
    expect(byAdmin.status).toBe(403);
    expect(await membersOf(orgId)).toEqual(['owner', 'admin', 'member']);
  });

  it('change role, and lose access at once when removed', async () => {
    const promoted = await call(app.url, `/api/organizations/${orgId}/members/${member.userId}`, { method: 'PUT', apiKey: admin.apiKey, body: { role: 'admin' } });
    expect(promoted.status).toBe(200);
    expect(promoted.body.data.role).toBe('admin');
    expect((await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: member.apiKey, body: { name: 'Acme Agency' } })).status).toBe(200);
    const removed = await call(app.url, `/api/organizations/${orgId}/members/${member.userId.toUpperCase()}`, { method: 'DELETE', apiKey: owner.apiKey });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ removed: true, userId: member.userId });
    const after = await call(app.url, `/api/organizations/${orgId}`, { apiKey: member.apiKey });
    expect(after.status).toBe(403);
    expect(after.body.error.code).toBe('ORG_NOT_MEMBER');
  });

  // Each request was checked before the other's removal committed: both used to succeed, leaving
  // neither of the two, which no one-after-the-other order allows.
  it.each([
    ['remove', (id: string) => ({ path: `/api/organizations/${id}/members`, method: 'DELETE', body: undefined })],
    ['demote', (id: string) => ({ path: `/api/organizations/${id}/members`, method: 'PUT', body: { role: 'member' } })],
  ] as const)('owners who %s each other at the same moment: one succeeds, the other is refused', async (_kind, request) => {
    for (let round = 0; round < 3; round += 1) {
      const first = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Fay');
      const second = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Sam');
      const created = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Standoff', slug: `standoff-${_kind}-${round}` } });
      const id = created.body.data.id;
      for (const actor of [first, second]) {
        expect((await call(app.url, `/api/organizations/${id}/members`, { apiKey: owner.apiKey, body: { userId: actor.userId, role: 'owner' } })).status).toBe(201);
      }
      const { path, method, body } = request(id);
      const [a, b] = await Promise.all([
        call(app.url, `${path}/${second.userId}`, { method, apiKey: first.apiKey, ...(body ? { body } : {}) }),
        call(app.url, `${path}/${first.userId}`, { method, apiKey: second.apiKey, ...(body ? { body } : {}) }),
      ]);
      expect([a.status, b.status].sort(), `${a.text} ${b.text}`).toEqual([200, 403]);
      const loser = a.status === 200 ? b : a;
      expect(['ORG_NOT_MEMBER', 'FORBIDDEN']).toContain(loser.body.error.code);
      const roles = await sqlAsOwner('select user_id, role from organization_members where organization_id = $1 and user_id = any($2)', [id, [first.userId, second.userId]]);
      expect(roles.filter((r) => r.role === 'owner')).toHaveLength(1);
    }
  });

  it('hand ownerId to the longest-standing owner when the owner it names leaves or is demoted', async () => {
    const [founder, heir, third] = [owner, await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Hal'), await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Tia')];
    const created = await call(app.url, '/api/organizations', { apiKey: founder.apiKey, body: { name: 'Succession', slug: 'succession' } });
    const id = created.body.data.id;
    for (const actor of [heir, third]) {
      expect((await call(app.url, `/api/organizations/${id}/members`, { apiKey: founder.apiKey, body: { userId: actor.userId, role: 'owner' } })).status).toBe(201);
    }
    const ownerIdOf = async () => (await call(app.url, `/api/organizations/${id}`, { apiKey: third.apiKey })).body.data.ownerId;
    // Demoting another owner leaves ownerId alone.
    expect((await call(app.url, `/api/organizations/${id}/members/${third.userId}`, { method: 'PUT', apiKey: founder.apiKey, body: { role: 'admin' } })).status).toBe(200);
    expect(await ownerIdOf()).toBe(founder.userId);
    expect((await call(app.url, `/api/organizations/${id}/members/${founder.userId}`, { method: 'DELETE', apiKey: founder.apiKey })).status).toBe(200);
    expect(await ownerIdOf()).toBe(heir.userId);
    expect((await call(app.url, `/api/organizations/${id}/members/${third.userId}`, { method: 'PUT', apiKey: heir.apiKey, body: { role: 'owner' } })).status).toBe(200);
    expect((await call(app.url, `/api/organizations/${id}/members/${heir.userId}`, { method: 'PUT', apiKey: heir.apiKey, body: { role: 'member' } })).status).toBe(200);
    expect(await ownerIdOf()).toBe(third.userId);
  });

  // Each locked every membership row (no order), and adding a member now also revokes invitations:
  // concurrent changes deadlocked in PostgreSQL and answered 500.
  it('take turns under a burst of concurrent adds, removals and role changes, with pending invitations: no 500s', async () => {
    const people = await Promise.all(['Ann', 'Ben', 'Cai', 'Dov', 'Eli', 'Fox', 'Gus', 'Hap'].map((name) => createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, name)));
    const created = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Churn', slug: 'churn-members' } });
    const id = created.body.data.id;
    // A populated table, so memberships are found through the index, as in production.
    const tenantId = app.bootstrap.tenantId;
    await sqlAsOwner(
      `with crowd as (insert into users (tenant_id, email, name) select $1, 'crowd-' || n || '@example.test', 'Crowd' from generate_series(1, 3000) n returning id)
       insert into organization_members (tenant_id, organization_id, user_id, role) select $1, $2, id, 'member' from crowd`,
      [tenantId, app.bootstrap.organizationId],
    );
    await sqlAsOwner('analyze organization_members');
    const failures: string[] = [];
    for (let round = 0; round < 8; round += 1) {
      await Promise.all(people.map((p) => call(app.url, '/api/customer-invitations', { apiKey: owner.apiKey, body: { organizationId: id, email: p.email, roleId: 'member' } })));
      const responses = await Promise.all(
        people.flatMap((p) => [
          call(app.url, `/api/organizations/${id}/members`, { apiKey: owner.apiKey, body: { userId: p.userId, role: 'admin' } }),
          call(app.url, `/api/organizations/${id}/members/${p.userId}`, { method: 'DELETE', apiKey: owner.apiKey }),
          call(app.url, `/api/organizations/${id}/members/${p.userId}`, { method: 'PUT', apiKey: owner.apiKey, body: { role: 'member' } }),
          call(app.url, `/api/organizations/${id}/members/${p.userId}`, { method: 'PUT', apiKey: owner.apiKey, body: { role: 'owner' } }),
        ]),
      );
      failures.push(...responses.filter((r) => r.status >= 500).map((r) => r.text));
    }
    expect(failures).toEqual([]);
    const owners = await sqlAsOwner("select user_id from organization_members where organization_id = $1 and role = 'owner'", [id]);
    const [organization] = await sqlAsOwner('select owner_id from organizations where id = $1', [id]);
    expect(owners.map((o) => o.user_id)).toContain(organization.owner_id);
  });
});
