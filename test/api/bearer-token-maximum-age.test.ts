import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * An identity provider's token is good only so long after it was issued (`iat`), whatever its `exp`
 * says: a leaked token with an `exp` years ahead used to work for years. A token without `iat` has
 * no age to check and is refused.
 */
const JWT_SECRET = 'a-shared-jwt-secret-for-token-age-tests-0123456789';
const now = () => Math.floor(Date.now() / 1000);
const HOUR = 3600;
const YEAR = 365 * 24 * HOUR;

let defaults: TestApp;
let tenMinutes: TestApp;
beforeAll(async () => {
  [defaults, tenMinutes] = await Promise.all([
    startTestApp({ env: { JWT_SECRET, JWT_ISSUER: 'https://idp.test', JWT_AUDIENCE: 'specwright' } }),
    startTestApp({ env: { JWT_SECRET, JWT_ISSUER: 'https://idp.test', JWT_AUDIENCE: 'specwright', JWT_MAX_TOKEN_AGE_SECONDS: '600' } }),
  ]);
});
afterAll(() => Promise.all([defaults?.stop(), tenMinutes?.stop()]));

const token = (app: TestApp, claims: Record<string, unknown>) =>
  new SignJWT({ iss: 'https://idp.test', aud: 'specwright', sub: app.bootstrap.userId, exp: now() + 5 * YEAR, ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(JWT_SECRET));
const me = async (app: TestApp, claims: Record<string, unknown>) => {
  const sent = await token(app, claims);
  const response = await call(app.url, '/api/me', { headers: { authorization: `Bearer ${sent}` } });
  // Whatever the answer, it never echoes the token.
  expect(response.text).not.toContain(sent);
  return { status: response.status, success: response.body?.success, code: response.body?.error?.code, message: response.body?.error?.message };
};
const accepted = { status: 200, success: true, code: undefined, message: undefined };
const refused = (message: string) => ({ status: 401, success: false, code: 'UNAUTHORIZED', message });

describe("an identity provider's token, by default", () => {
  it('is taken when issued just now or up to 24 hours ago, however far ahead its exp', async () => {
    expect(await me(defaults, { iat: now() })).toEqual(accepted);
    expect(await me(defaults, { iat: now() - 23 * HOUR })).toEqual(accepted);
  });

  it('is refused when issued more than 24 hours ago, though its exp is years ahead', async () => {
    expect(await me(defaults, { iat: now() - 25 * HOUR })).toEqual(refused('The bearer token is older than this service accepts: issued (iat) more than 1 day ago; get a new one from the identity provider'));
    expect(await me(defaults, { iat: now() - 2 * YEAR })).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('is refused without iat, whose age cannot be checked', async () => {
    expect(await me(defaults, {})).toEqual(refused('The bearer token has no iat claim, so its age cannot be checked'));
    expect(await me(defaults, { exp: now() + 300 })).toEqual(refused('The bearer token has no iat claim, so its age cannot be checked'));
  });

  it('allows the same 30 s of clock difference on iat as on exp and nbf, and no more', async () => {
    expect(await me(defaults, { iat: now() - 24 * HOUR - 10 })).toEqual(accepted);
    expect(await me(defaults, { iat: now() + 10 })).toEqual(accepted);
    expect(await me(defaults, { iat: now() + 120 })).toEqual(refused('The bearer token is issued in the future (iat)'));
    expect(await me(defaults, { iat: String(now()) })).toEqual(refused("The bearer token's iat claim is not a number of seconds"));
  });
});

describe('JWT_MAX_TOKEN_AGE_SECONDS', () => {
  it('sets the oldest token taken, and the refusal names it', async () => {
    expect(await me(tenMinutes, { iat: now() - 5 * 60 })).toEqual(accepted);
    expect(await me(tenMinutes, { iat: now() - 15 * 60 })).toEqual(refused('The bearer token is older than this service accepts: issued (iat) more than 10 minutes ago; get a new one from the identity provider'));
  });
});
