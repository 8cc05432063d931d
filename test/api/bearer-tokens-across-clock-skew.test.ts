import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * An identity provider's clock is never exactly ours. A token it has just issued with `nbf` (or one
 * about to expire) must not be refused for a few seconds of difference — a client told 401 drops
 * a good token — and a token that is refused must say why in words that fit the reason.
 */
const JWT_SECRET = 'a-shared-jwt-secret-for-clock-tests-0123456789';
const now = () => Math.floor(Date.now() / 1000);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { JWT_SECRET, JWT_ISSUER: 'https://idp.test', JWT_AUDIENCE: 'specwright' } });
});
afterAll(() => app?.stop());

const token = (claims: Record<string, unknown>) =>
  new SignJWT({ iss: 'https://idp.test', aud: 'specwright', sub: app.bootstrap.userId, iat: now(), ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(JWT_SECRET));
const me = async (claims: Record<string, unknown>) => {
  const response = await call(app.url, '/api/me', { headers: { authorization: `Bearer ${await token(claims)}` } });
  return { status: response.status, message: response.body?.error?.message };
};

describe("an identity provider's token", () => {
  it('is taken when its clock runs a few seconds ahead of ours (nbf) or behind (exp)', async () => {
    expect(await me({ iat: now() + 10, nbf: now() + 10, exp: now() + 300 })).toEqual({ status: 200, message: undefined });
    expect(await me({ exp: now() - 10 })).toEqual({ status: 200, message: undefined });
  });

  it('is refused beyond that leeway, saying why', async () => {
    expect(await me({ nbf: now() + 120, exp: now() + 300 })).toEqual({ status: 401, message: 'The bearer token is not valid yet (nbf)' });
    expect(await me({ exp: now() - 120 })).toEqual({ status: 401, message: 'The bearer token has expired' });
  });

  it('with a time claim that is no number is refused as such, not as meant for another service', async () => {
    expect(await me({ exp: String(now() + 300) })).toEqual({ status: 401, message: "The bearer token's exp claim is not a number of seconds" });
    expect(await me({ exp: now() + 300, nbf: 'soon' })).toEqual({ status: 401, message: "The bearer token's nbf claim is not a number of seconds" });
    expect(await me({ exp: now() + 300, aud: 'another-service' })).toEqual({ status: 401, message: 'The bearer token was not issued for this service (aud check failed)' });
  });
});
