import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpecwrightClient } from '../../sdk/index.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Every procedure of the issue, called through the typed client (tRPC's wire, not the REST
 * projection), with a fetch that keeps each answer: none holds a stored password, key or token
 * hash. (The suite's scan, test/setup/no-hashes-in-responses.ts, sees these answers too, where
 * the server writes them.)
 */
let app: TestApp;
const seen: string[] = [];
const recordingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const text = await response.clone().text();
  seen.push(text);
  return response;
};

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('answers of the typed client, on every procedure of the issue', () => {
  it('carry no password hash, API-key hash or invitation-token hash', async () => {
    const owner = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey, fetch: recordingFetch });
    const anonymous = createSpecwrightClient({ url: app.url, fetch: recordingFetch });
    const organizationId = app.bootstrap.organizationId;

    const organization = await owner.organizations.create.mutate({ name: 'Via SDK', slug: 'via-sdk' });
    await owner.organizations.list.query({});
    await owner.organizations.get.query({ id: organization.id });
    await owner.organizations.update.mutate({ id: organization.id, displayName: 'SDK' });
    await owner.organizations.slugCheck.query({ slug: 'via-sdk' });

    const password = 'a long enough password via the sdk';
    const invitation = await owner.customerInvitations.create.mutate({ organizationId, email: 'sdk-guest@invitee.test', message: 'hello' });
    await owner.customerInvitations.get.query({ token: invitation.token });
    const accepted = await anonymous.customerInvitations.accept.mutate({ token: invitation.token, name: 'Sdk Guest', password });
    const pending = await owner.customerInvitations.create.mutate({ organizationId, email: 'sdk-other@invitee.test' });
    await owner.customerInvitations.list.query({ organizationId });
    await owner.customerInvitations.revoke.mutate({ token: pending.token });

    const session = await anonymous.auth.login.mutate({ email: 'sdk-guest@invitee.test', password });
    const guest = createSpecwrightClient({ url: app.url, bearerToken: session.accessToken, fetch: recordingFetch });
    await guest.me.get.query();

    await owner.organizations.members.list.query({ id: organizationId });
    const project = await owner.projects.create.mutate({ name: 'Via SDK', organizationId });
    const assignment = await owner.agencyProjects.create.mutate({ organizationId, projectId: project.id, customerUserId: accepted.userId });
    await owner.agencyProjects.list.query({ organizationId });
    await guest.projects.list.query({});
    await guest.projects.get.query({ projectId: project.id });
    await owner.projects.update.mutate({ projectId: project.id, description: 'via the sdk' });
    await owner.agencyProjects.delete.mutate({ id: assignment.id });
    await owner.organizations.members.changeRole.mutate({ id: organizationId, userId: accepted.userId, role: 'member' });
    await owner.organizations.members.remove.mutate({ id: organizationId, userId: accepted.userId });
    await owner.projects.delete.mutate({ projectId: project.id });

    const key = await owner.apiKeys.create.mutate({ name: 'via sdk' });
    await owner.apiKeys.list.query({});
    await owner.apiKeys.revoke.mutate({ keyId: key.id });

    const hashes = (
      await ownerQuery<{ hash: string }>(
        app.database.ownerUrl,
        `select key_hash as hash from api_keys union all select password_hash from users where password_hash is not null union all select token_hash from customer_invitations`,
      )
    ).map((row) => row.hash);
    // The user created by accepting has a password hash, the keys and invitations theirs.
    expect(hashes.some((hash) => hash.startsWith('$argon2id$'))).toBe(true);
    expect(seen.length).toBeGreaterThanOrEqual(25);
    expect(seen.filter((text) => hashes.some((hash) => text.includes(hash)))).toEqual([]);
  });
});
