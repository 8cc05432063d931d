import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { whileTransactionHolds } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// Races the other files do not stage: each is made deterministic by a transaction that holds the
// locks the concurrent request takes, and is committed once the request under test waits on them.

const PASSWORD = 'a long enough password 42';
let app: TestApp;
let ownerKey: string;
let orgId: string;
let next = 0;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const freshEmail = () => `racer-${++next}@races.test`;

async function invite(email = freshEmail()) {
  const response = await call(app.url, '/api/customer-invitations', { apiKey: ownerKey, body: { organizationId: orgId, email } });
  expect(response.status, response.text).toBe(201);
  return response.body.data as { id: string; token: string; email: string };
}

beforeAll(async () => {
  app = await startTestApp();
  ownerKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

describe('promoting a customer while a project is being assigned to them', () => {
  it('waits for the assignment and removes it too: none outlives the customer role', async () => {
    const { token } = await invite();
    const accepted = await call(app.url, `/api/customer-invitations/${token}/accept`, { body: { name: 'Cleo', password: PASSWORD } });
    expect(accepted.status, accepted.text).toBe(200);
    const customerId = accepted.body.data.userId;
    const project = await call(app.url, '/api/projects', { apiKey: ownerKey, body: { name: 'Assigned meanwhile', organizationId: orgId } });
    // An assignment in flight: it share-locks the membership, as assigning does, and is not committed yet.
    const promoted = await whileTransactionHolds(
      app.database.ownerUrl,
      async (holder) => {
        await holder.query('select 1 from organization_members where organization_id = $1 and user_id = $2 for share', [orgId, customerId]);
        await holder.query('insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)', [
          app.bootstrap.tenantId,
          orgId,
          project.body.data.id,
          customerId,
        ]);
      },
      () => call(app.url, `/api/organizations/${orgId}/members/${customerId}`, { method: 'PUT', apiKey: ownerKey, body: { role: 'member' } }),
    );
    expect([promoted.status, promoted.body.data?.role]).toEqual([200, 'member']);
    expect(await sqlAsOwner('select id from agency_project_assignments where customer_user_id = $1', [customerId])).toEqual([]);
  });
});

describe('accepting an invitation while it is being revoked', () => {
  it('waits for the revocation, answers CONFLICT and creates neither user nor membership', async () => {
    const { id, token, email } = await invite();
    const accepted = await whileTransactionHolds(
      app.database.ownerUrl,
      async (holder) => {
        await holder.query('select 1 from customer_invitations where id = $1 for update', [id]);
        await holder.query("update customer_invitations set status = 'revoked', revoked_at = now() where id = $1", [id]);
      },
      () => call(app.url, `/api/customer-invitations/${token}/accept`, { body: { name: 'Too Late', password: PASSWORD } }),
    );
    expect([accepted.status, accepted.body.error?.code, accepted.body.error?.message]).toEqual([409, 'CONFLICT', 'The invitation has been revoked']);
    expect(await sqlAsOwner('select id from users where lower(email) = lower($1)', [email])).toEqual([]);
    expect((await sqlAsOwner('select status from customer_invitations where id = $1', [id]))[0].status).toBe('revoked');
  });
});
