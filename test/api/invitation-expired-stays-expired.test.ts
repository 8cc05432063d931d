import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';

// Removing or demoting an inviter, or adding an invitee directly, revokes the pending invitations
// concerned. It used to revoke the expired ones with them (they are stored as pending), so an
// invitation that had run out days before read `revoked`, with a `revokedAt` of the removal, and
// left the `expired` list: the history said an admin withdrew what had simply lapsed.

let app: TestApp;
let ownerKey: string;
let orgId: string;
let next = 0;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const expire = (id: string) => sqlAsOwner("update customer_invitations set expires_at = now() - interval '1 day' where id = $1", [id]);

async function invite(apiKey: string, email = `lapsed-${++next}@invitee.test`) {
  const response = await call(app.url, '/api/customer-invitations', { apiKey, body: { organizationId: orgId, email } });
  expect(response.status, response.text).toBe(201);
  return response.body.data as { id: string };
}
async function addMember(userId: string, role: string) {
  const added = await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: ownerKey, body: { userId, role } });
  expect(added.status, added.text).toBe(201);
}
async function makeAdmin(name: string): Promise<Actor> {
  const user = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, name);
  await addMember(user.userId, 'admin');
  return user;
}
/** The invitations as the admins' list shows them: `id:status:revokedAt`. */
async function listed(ids: string[]) {
  const response = await call(app.url, `/api/customer-invitations?organizationId=${orgId}&limit=200`, { apiKey: ownerKey });
  expect(response.status, response.text).toBe(200);
  const byId = new Map(response.body.data.invitations.map((i: { id: string; status: string; revokedAt: string | null }) => [i.id, `${i.status}:${i.revokedAt === null ? 'never' : 'revoked'}`]));
  return ids.map((id) => byId.get(id));
}

beforeAll(async () => {
  app = await startTestApp();
  ownerKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

describe('an expired invitation', () => {
  it("stays expired when its inviter is removed or demoted; the pending ones they sent are revoked", async () => {
    const removed = await makeAdmin('Rita');
    const demoted = await makeAdmin('Dirk');
    const [lapsedOfRemoved, pendingOfRemoved, lapsedOfDemoted] = [await invite(removed.apiKey), await invite(removed.apiKey), await invite(demoted.apiKey)];
    await expire(lapsedOfRemoved.id);
    await expire(lapsedOfDemoted.id);

    expect((await call(app.url, `/api/organizations/${orgId}/members/${removed.userId}`, { method: 'DELETE', apiKey: ownerKey })).status).toBe(200);
    expect((await call(app.url, `/api/organizations/${orgId}/members/${demoted.userId}`, { method: 'PUT', apiKey: ownerKey, body: { role: 'member' } })).status).toBe(200);

    expect(await listed([lapsedOfRemoved.id, pendingOfRemoved.id, lapsedOfDemoted.id])).toEqual(['expired:never', 'revoked:revoked', 'expired:never']);
    const expiredOnes = await call(app.url, `/api/customer-invitations?organizationId=${orgId}&status=expired`, { apiKey: ownerKey });
    expect(expiredOnes.body.data.invitations.map((i: { id: string }) => i.id).sort()).toEqual([lapsedOfRemoved.id, lapsedOfDemoted.id].sort());
  });

  it('stays expired when its invitee is added as a member directly', async () => {
    const invitee = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Ivy');
    const lapsed = await invite(ownerKey, invitee.email);
    await expire(lapsed.id);
    // Its email is free for a new invitation once it has expired; adding the invitee ends that one.
    const pending = await invite(ownerKey, invitee.email.toUpperCase());

    await addMember(invitee.userId, 'member');

    expect(await listed([lapsed.id, pending.id])).toEqual(['expired:never', 'revoked:revoked']);
  });
});
