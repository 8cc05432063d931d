import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpecwrightClient } from '../../sdk/index.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { failureOf } from './failure-of.ts';

/**
 * The client's url is read as a URL, once: calls go where it points, whatever whitespace surrounds
 * it, and a url whose query or fragment would swallow every call's path is refused when the client
 * is made.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('the url the client is made with', () => {
  it('works with whitespace around it (a .env line ending in a space), as the CLI takes SPECWRIGHT_URL', async () => {
    for (const url of [`${app.url} `, ` ${app.url}/ `]) {
      const me = await createSpecwrightClient({ url, apiKey: app.bootstrap.apiKey }).me.get.query();
      expect(me.userId).toBe(app.bootstrap.userId);
    }
  });

  it('with a trailing space, never yields an error that shows a query\'s input (an invitation token)', async () => {
    const token = 'tok3n-that-is-the-credential-of-an-invitation-0123456789';
    const error = await failureOf(createSpecwrightClient({ url: `${app.url} ` }).customerInvitations.get.query({ token }));
    expect(inspect(error, { depth: 10 })).not.toContain(token);
    // The service answered (NOT_FOUND): it was reached.
    expect(error.message).not.toMatch(/cannot reach/);
  });

  it('is refused when it carries a query or a fragment, without showing it: every call would miss its procedure', () => {
    for (const url of [`${app.url}?api_key=swk_pasted_secret`, `${app.url}/#swk_pasted_secret`]) {
      const made = () => createSpecwrightClient({ url, apiKey: app.bootstrap.apiKey });
      expect(made).toThrow("url carries a query or a fragment (the value is not shown); pass the service's base URL (expected http(s)://host[:port])");
    }
  });
});
