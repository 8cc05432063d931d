import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createUserInTenant } from '../helpers/tenant-fixtures.ts';

// Inviting an email checked first that it belonged to no member, then that no invitation for it
// was pending. An acceptance of the pending one committing between the two checks passed both: the
// member it had just made was sent a second, pending invitation (a CONFLICT any other time).
// The staging below holds each request at the moment the race needs, with two owner transactions.

let app: TestApp;
let ownerKey: string;
let orgId: string;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

async function ownerTransaction() {
  const client = new pg.Client({ connectionString: app.database.ownerUrl });
  await client.connect();
  await client.query('begin');
  return client;
}

beforeAll(async () => {
  app = await startTestApp();
  ownerKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

describe('inviting an email while its pending invitation is being accepted', () => {
  it('answers CONFLICT once the acceptance commits, and leaves no pending invitation for the new member', async () => {
    const invitee = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Rae');
    const first = await call(app.url, '/api/customer-invitations', { apiKey: ownerKey, body: { organizationId: orgId, email: invitee.email } });
    expect(first.status, first.text).toBe(201);

    // Holds the acceptance just before it adds the membership (its foreign-key check waits for the user row).
    const userRowHolder = await ownerTransaction();
    // Queued behind the acceptance's lock on the invitations, so the next reader of the table waits until it commits.
    const tableLocker = await ownerTransaction();
    let acceptance, secondInvite;
    try {
      await userRowHolder.query('select 1 from users where id = $1 for update', [invitee.userId]);
      const accepting = call(app.url, `/api/customer-invitations/${first.body.data.token}/accept`, { apiKey: invitee.apiKey, body: { userId: invitee.userId } });
      await untilLockWaiters(app.database.ownerUrl, 1);
      const tableLocked = tableLocker.query('lock table customer_invitations in access exclusive mode');
      await untilLockWaiters(app.database.ownerUrl, 2);
      const inviting = call(app.url, '/api/customer-invitations', { apiKey: ownerKey, body: { organizationId: orgId, email: invitee.email } });
      await untilLockWaiters(app.database.ownerUrl, 3);

      await userRowHolder.query('commit');
      acceptance = await accepting;
      await tableLocked;
      await tableLocker.query('commit');
      secondInvite = await inviting;
    } finally {
      await userRowHolder.end();
      await tableLocker.end();
    }

    expect(acceptance.status, acceptance.text).toBe(200);
    expect([secondInvite.status, secondInvite.body.error?.code]).toEqual([409, 'CONFLICT']);
    const pending = await call(app.url, `/api/customer-invitations?organizationId=${orgId}&status=pending`, { apiKey: ownerKey });
    expect(pending.body.data.invitations.filter((i: { email: string }) => i.email === invitee.email)).toEqual([]);
  });
});
