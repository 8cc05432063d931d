import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// An invitation's answers show an absent message as null; a create given back what an answer
// showed takes it too, as organizations' displayName and projects' description do.
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('POST /api/customer-invitations with message: null', () => {
  it('creates the invitation with no message, as leaving the field out does', async () => {
    const invite = (body: Record<string, unknown>) =>
      call(app.url, '/api/customer-invitations', { apiKey: app.bootstrap.apiKey, body: { organizationId: app.bootstrap.organizationId, ...body } });

    const withNull = await invite({ email: `null-message-${Date.now()}@invitee.test`, message: null });
    expect(withNull.status, withNull.text).toBe(201);
    expect(withNull.body.data.message).toBeNull();

    const listed = await call(app.url, `/api/customer-invitations?organizationId=${app.bootstrap.organizationId}`, { apiKey: app.bootstrap.apiKey });
    const shown = listed.body.data.invitations.find((invitation: { id: string }) => invitation.id === withNull.body.data.id);
    expect(shown.message).toBeNull();

    // What the answer showed, sent back as a create, is taken as it was shown.
    const echoed = await invite({ email: `echoed-${Date.now()}@invitee.test`, message: shown.message, roleId: shown.role });
    expect(echoed.status, echoed.text).toBe(201);
    expect(echoed.body.data.message).toBeNull();

    // A message still has to be text when it is not null.
    const wrongType = await invite({ email: `number-${Date.now()}@invitee.test`, message: 42 });
    expect([wrongType.status, wrongType.body.error.details.issues.map((issue: { field: string }) => issue.field)]).toEqual([400, ['message']]);
  });

  it('documents the message as nullable in /api/openapi.json', async () => {
    const document = (await call(app.url, '/api/openapi.json')).body;
    const schema = document.paths['/customer-invitations'].post.requestBody.content['application/json'].schema;
    const message = schema.properties.message;
    const allowsNull = message.nullable === true || message.type?.includes?.('null') || (message.anyOf ?? message.oneOf ?? []).some((part: { type?: string; nullable?: boolean }) => part.type === 'null' || part.nullable === true);
    expect(allowsNull, JSON.stringify(message)).toBe(true);
  });
});
