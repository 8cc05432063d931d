import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertTenantWithUser, ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

let database: TestDatabase;
let tenantId: string;
let userId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ tenantId, userId } = await insertTenantWithUser(database.ownerUrl, 'u@example.com'));
  await ownerQuery(database.ownerUrl, `insert into worker_heartbeats (worker_id, job_pool_id) values ('worker-live', 'pool-live')`);
});

/** Runs `text` as the app role (what every request runs as), in a transaction for the tenant. */
async function asAppRole(text: string, values: unknown[] = []): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: database.appUrl });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`select set_config('app.tenant_id', $1, true)`, [tenantId]);
    await client.query(text, values);
    await client.query('rollback');
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  } finally {
    await client.end();
  }
}

describe('the app role (least privilege: only what requests need)', () => {
  it('reads worker heartbeats (health) but cannot forge, refresh or remove them', async () => {
    expect(await asAppRole('select max(last_seen_at) from worker_heartbeats')).toBeUndefined();
    // A forged stale heartbeat naming a live pool would make the reaper release that worker's running jobs.
    expect(await asAppRole(`insert into worker_heartbeats (worker_id, last_seen_at, job_pool_id) values ('forged', now() - interval '1 day', 'pool-live')`)).toBe('42501');
    expect(await asAppRole(`update worker_heartbeats set last_seen_at = now() - interval '1 day'`)).toBe('42501');
    expect(await asAppRole('delete from worker_heartbeats')).toBe('42501');
  });

  it('cannot delete its tenant or users (no request does; either would cascade through the tenant)', async () => {
    expect(await asAppRole('delete from tenants where id = $1', [tenantId])).toBe('42501');
    expect(await asAppRole('delete from users where id = $1', [userId])).toBe('42501');
    expect(await asAppRole(`update tenants set features = '{}' where id = $1`, [tenantId])).toBeUndefined();
    expect(await asAppRole(`update users set name = 'v' where id = $1`, [userId])).toBeUndefined();
  });

  it('cannot write kit outputs or bundle bytes (workers do), nor change a published kit version', async () => {
    expect(await asAppRole(`insert into blobs (tenant_id, content_type, size_bytes, sha256, content) values ($1, 'application/zip', 1, 'x', '\\x00')`, [tenantId])).toBe('42501');
    expect(await asAppRole(`update blobs set size_bytes = 0`)).toBe('42501');
    expect(await asAppRole(`update kit_outputs set content = ''`)).toBe('42501');
    expect(await asAppRole(`update kit_versions set files = '{}'`)).toBe('42501');
    // What requests do with them: read them, and delete them with their project.
    expect(await asAppRole('select count(*) from kit_outputs')).toBeUndefined();
    expect(await asAppRole('delete from kit_outputs')).toBeUndefined();
    expect(await asAppRole('delete from blobs')).toBeUndefined();
  });

  it('cannot delete a kit or kit version (a kit is deprecated, never removed), nor move, rename or re-hash an API key', async () => {
    expect(await asAppRole('delete from kit_versions')).toBe('42501');
    expect(await asAppRole('delete from kits')).toBe('42501');
    const [key] = await ownerQuery(
      database.ownerUrl,
      `insert into api_keys (tenant_id, user_id, name, prefix, key_hash) values ($1, $2, 'ci', 'abcdefgh', 'hash') returning id`,
      [tenantId, userId],
    );
    expect(await asAppRole('update api_keys set user_id = $1 where id = $2', [userId, key.id])).toBe('42501');
    expect(await asAppRole(`update api_keys set key_hash = 'other' where id = $1`, [key.id])).toBe('42501');
    expect(await asAppRole(`update api_keys set name = 'renamed' where id = $1`, [key.id])).toBe('42501');
    // What requests do: revoke it.
    expect(await asAppRole('update api_keys set revoked_at = now() where id = $1', [key.id])).toBeUndefined();
  });

  it('still writes what requests write: rate-limit counters', async () => {
    expect(await asAppRole(`insert into rate_limits (key, points, expire) values ('k', 1, 0)`)).toBeUndefined();
    expect(await asAppRole(`delete from rate_limits where key = 'k'`)).toBeUndefined();
  });
});
