// Hashing a new password is deliberately costly (argon2id), and accepting an invitation is public:
// an invitation that can no longer be accepted must be refused before any password is hashed, or
// anyone holding a dead token could spend the service's CPU with no throttle.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const hashes = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../control-plane/domains/users/password-hash.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../control-plane/domains/users/password-hash.ts')>();
  return {
    ...original,
    hashPassword: (password: string) => {
      hashes.count += 1;
      return original.hashPassword(password);
    },
  };
});

const PASSWORD = 'a long enough password 42';
let app: TestApp;
let next = 0;

async function invite(email = `costly-${++next}@invitee.test`) {
  const response = await call(app.url, '/api/customer-invitations', {
    apiKey: app.bootstrap.apiKey,
    body: { organizationId: app.bootstrap.organizationId, email },
  });
  expect(response.status, response.text).toBe(201);
  return response.body.data as { id: string; token: string };
}
const accept = (token: string) => call(app.url, `/api/customer-invitations/${token}/accept`, { body: { name: 'Guest', password: PASSWORD } });

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('accepting an invitation as a new user', () => {
  it('refuses a revoked, accepted or expired invitation, or one for a registered email, without hashing the password', async () => {
    const revoked = await invite();
    expect((await call(app.url, `/api/customer-invitations/${revoked.token}/revoke`, { body: {}, apiKey: app.bootstrap.apiKey })).status).toBe(200);
    const accepted = await invite();
    expect((await accept(accepted.token)).status).toBe(200);
    const expired = await invite();
    await ownerQuery(app.database.ownerUrl, "update customer_invitations set expires_at = now() - interval '1 second' where id = $1", [expired.id]);

    // Live, but for an email that has an account already: only accepting as that user can work.
    const registered = await createUserInTenant(app, (sql, values = []) => ownerQuery(app.database.ownerUrl, sql, values), app.bootstrap.tenantId, 'Reg');
    const forRegistered = await invite(registered.email);

    const before = hashes.count;
    const answers = await Promise.all([revoked, accepted, expired, forRegistered].map(async ({ token }) => (await accept(token)).body.error?.code));
    expect(answers).toEqual(['CONFLICT', 'CONFLICT', 'INVITE_EXPIRED', 'CONFLICT']);
    expect(hashes.count - before).toBe(0);
  });

  it('hashes the password once for an invitation that holds', async () => {
    const pending = await invite();
    const before = hashes.count;
    expect((await accept(pending.token)).status).toBe(200);
    expect(hashes.count - before).toBe(1);
  });
});
