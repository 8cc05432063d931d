import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { millisecondsBetween, withProcessClockAnHourAhead } from '../helpers/process-clock-ahead.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';

/**
 * Rows get `created_at` from the database's clock. An API node whose clock runs an hour ahead of the
 * database's must not stamp a later change of the row with its own time: `updatedAt` an hour after
 * `createdAt` for a change made a moment later, or a key revoked "in the future".
 */
let app: TestApp;
let key: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const A_MINUTE_MS = 60_000;

beforeAll(async () => {
  // Rate-limit windows are counted by the process's clock; an hour's jump must not exhaust them.
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
});
afterAll(() => app?.stop());

describe('with the API process clock an hour ahead of the database', () => {
  it('a PATCHed project shows updatedAt within a minute of its createdAt, not an hour later', async () => {
    await withProcessClockAnHourAhead(async () => {
      const created = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Skewed' } });
      expect(created.status, created.text).toBe(201);
      const patched = await call(app.url, `/api/projects/${created.body.data.id}`, { method: 'PATCH', apiKey: key, body: { name: 'Skewed, renamed' } });
      expect(patched.status, patched.text).toBe(200);
      const { createdAt, updatedAt } = patched.body.data;
      expect(millisecondsBetween(createdAt, updatedAt)).toBeGreaterThanOrEqual(0);
      expect(millisecondsBetween(createdAt, updatedAt)).toBeLessThan(A_MINUTE_MS);
    });
  });

  it('a PUT organization shows updatedAt within a minute of its createdAt', async () => {
    await withProcessClockAnHourAhead(async () => {
      const created = await call(app.url, '/api/organizations', { apiKey: key, body: { name: 'Skewed org', slug: `skewed-${crypto.randomUUID().slice(0, 8)}` } });
      expect(created.status, created.text).toBe(201);
      const updated = await call(app.url, `/api/organizations/${created.body.data.id}`, { method: 'PUT', apiKey: key, body: { displayName: 'Skewed, renamed' } });
      expect(updated.status, updated.text).toBe(200);
      const { createdAt, updatedAt } = updated.body.data;
      expect(millisecondsBetween(createdAt, updatedAt)).toBeGreaterThanOrEqual(0);
      expect(millisecondsBetween(createdAt, updatedAt)).toBeLessThan(A_MINUTE_MS);
    });
  });

  it('a revoked API key shows revokedAt within a minute of its createdAt', async () => {
    await withProcessClockAnHourAhead(async () => {
      const issued = await call(app.url, '/api/developer/api-keys', { apiKey: key, body: { name: 'skewed' } });
      expect(issued.status, issued.text).toBe(201);
      const revoked = await call(app.url, `/api/developer/api-keys/${issued.body.data.id}`, { method: 'DELETE', apiKey: key });
      expect(revoked.status, revoked.text).toBe(200);
      const { createdAt, revokedAt } = revoked.body.data;
      expect(millisecondsBetween(createdAt, revokedAt)).toBeGreaterThanOrEqual(0);
      expect(millisecondsBetween(createdAt, revokedAt)).toBeLessThan(A_MINUTE_MS);
    });
  });

  it('a reissued owner key revokes the old one within a minute of the new one being made', async () => {
    const tenant = await createTenant(app, 'Skewed tenant');
    const [oldKey] = await sqlAsOwner('select id from api_keys where user_id = $1', [tenant.userId]);
    const newKeyId = await withProcessClockAnHourAhead(async () => {
      const reissued = await call(app.url, `/api/admin/tenants/${tenant.tenantId}/owner-key`, { method: 'POST', apiKey: key });
      expect(reissued.status, reissued.text).toBe(201);
      return reissued.body.data.id as string;
    });
    expect((await sqlAsOwner('select revoked_at is not null as revoked from api_keys where id = $1', [oldKey.id]))[0].revoked).toBe(true);
    const [{ ms }] = await sqlAsOwner(
      'select round(extract(epoch from old.revoked_at - new.created_at) * 1000)::int as ms from api_keys old, api_keys new where old.id = $1 and new.id = $2',
      [oldKey.id, newKeyId],
    );
    expect(Math.abs(ms)).toBeLessThan(A_MINUTE_MS);
  });
});
