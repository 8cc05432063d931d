import { expect } from 'vitest';
import { call } from './http.ts';
import { ownerQuery } from './owner-sql.ts';
import type { TestApp } from './test-app.ts';

export interface Actor {
  userId: string;
  apiKey: string;
  email: string;
}

let counter = 0;

/** A new tenant (through the admin API) whose owner is returned as an actor. */
export async function createTenant(app: TestApp, name = 'Other'): Promise<Actor & { tenantId: string; organizationId: string }> {
  counter += 1;
  const email = `owner-${counter}-${Date.now()}@${name.toLowerCase().replace(/\W/g, '')}.test`;
  const response = await call(app.url, '/api/admin/tenants', { apiKey: app.bootstrap.apiKey, body: { name, ownerEmail: email } });
  expect(response.status, response.text).toBe(201);
  return { ...response.body.data, email };
}

/** A user in the bootstrap tenant with their own API key, inserted as the owner (no sign-up API yet). */
export async function createUserInTenant(app: TestApp, ownerQuery: (sql: string, values: unknown[]) => Promise<any[]>, tenantId: string, name: string): Promise<Actor> {
  counter += 1;
  const email = `${name.toLowerCase()}-${counter}-${Date.now()}@example.test`;
  const [user] = await ownerQuery('insert into users (tenant_id, email, name) values ($1, $2, $3) returning id', [tenantId, email, name]);
  const { generateApiKey } = await import('../../control-plane/auth/api-key-format.ts');
  const key = generateApiKey();
  await ownerQuery('insert into api_keys (tenant_id, user_id, name, prefix, key_hash) values ($1, $2, $3, $4, $5)', [tenantId, user.id, 'test', key.prefix, key.keyHash]);
  return { userId: user.id, apiKey: key.key, email };
}

/**
 * A user of the bootstrap tenant who co-owns an organization of its own (founded by `founderApiKey`,
 * since a user of no organization may not found one): an owner, but not of the organization under test.
 */
export async function ownerOfAnotherOrganization(app: TestApp, founderApiKey: string, name: string): Promise<Actor> {
  const user = await createUserInTenant(app, (sql, values) => ownerQuery(app.database.ownerUrl, sql, values), app.bootstrap.tenantId, name);
  const founded = await call(app.url, '/api/organizations', { apiKey: founderApiKey, body: { name: 'Elsewhere', slug: `elsewhere-${user.userId.slice(0, 8)}` } });
  expect(founded.status, founded.text).toBe(201);
  const added = await call(app.url, `/api/organizations/${founded.body.data.id}/members`, { apiKey: founderApiKey, body: { userId: user.userId, role: 'owner' } });
  expect(added.status, added.text).toBe(201);
  return user;
}
