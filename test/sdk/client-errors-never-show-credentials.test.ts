import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpecwrightClient } from '../../sdk/index.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { failureOf } from './failure-of.ts';

/** A credential that cannot travel in a header is refused in words that do not show it. */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

/** What the caller sees of a client made with these options and asked who they are. */
const outcomeOf = async (options: Parameters<typeof createSpecwrightClient>[0]) => {
  try {
    return { ok: await createSpecwrightClient(options).me.get.query() };
  } catch (error) {
    return { error: error as Error };
  }
};

describe('credentials in the errors the client throws', () => {
  it('a key with a line break inside (two lines of a file read as one) is refused without showing it', async () => {
    const key = `${app.bootstrap.apiKey.slice(0, 20)}\n${app.bootstrap.apiKey.slice(20)}`;
    const { error } = await outcomeOf({ url: app.url, apiKey: key });
    expect(error?.message).toBe('apiKey contains a control or non-ASCII character, which no credential has (the value is not shown); check how it was copied');
    expect(`${error?.message} ${String(error?.cause)}`).not.toContain(app.bootstrap.apiKey.slice(20));
  });

  it('a bearer token with a control character inside is refused without showing it', async () => {
    const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0\u0007.c2lnbmF0dXJlLXNlY3JldA';
    const { error } = await outcomeOf({ url: app.url, bearerToken: token });
    expect(error?.message).toMatch(/^bearerToken contains a control or non-ASCII character/);
    expect(`${error?.message} ${String(error?.cause)}`).not.toContain('c2lnbmF0dXJlLXNlY3JldA');
  });

  it('a url with a password in it is refused without showing it', async () => {
    const { error } = await outcomeOf({ url: app.url.replace('http://', 'http://deploy:pa55word-of-the-proxy@'), apiKey: app.bootstrap.apiKey });
    expect(error?.message).toBe('url carries a user name or password, which fetch refuses (the value is not shown); pass apiKey or bearerToken instead');
    expect(inspect(error, { depth: 10 })).not.toContain('pa55word-of-the-proxy');
  });

  it('an apiKey and a bearerToken together are refused when the client is made, as the service refuses a request carrying both', async () => {
    const { error } = await outcomeOf({ url: app.url, apiKey: app.bootstrap.apiKey, bearerToken: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' });
    expect(error?.message).toBe('pass apiKey or bearerToken, not both: the service refuses a request that carries two credentials');
    expect(inspect(error, { depth: 10 })).not.toContain(app.bootstrap.apiKey.slice(20));
  });

  it('a key read with a trailing CRLF (a .env file) still works', async () => {
    const { ok } = await outcomeOf({ url: app.url, apiKey: `${app.bootstrap.apiKey}\r\n` });
    expect(ok?.userId).toBe(app.bootstrap.userId);
  });
});

describe('a query whose input is a secret', () => {
  it('a failed call logged whole does not show the input its URL carried (an invitation token)', async () => {
    const client = createSpecwrightClient({ url: app.url });
    const token = 'tok3n-that-is-the-credential-of-an-invitation-0123456789';
    const error = await failureOf(client.customerInvitations.get.query({ token }));
    // What console.error(error) prints.
    expect(inspect(error, { depth: 10 })).toContain('NOT_FOUND');
    expect(inspect(error, { depth: 10 })).not.toContain(token);
  });
});
