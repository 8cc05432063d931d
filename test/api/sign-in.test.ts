import { argon2Sync, randomBytes } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveSessionSigningKey } from '../../control-plane/auth/session-token.ts';
import { hashPassword } from '../../control-plane/domains/users/password-hash.ts';
import { call } from '../helpers/http.ts';
import { callFrom } from '../helpers/http-from.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';

const JWT_SECRET = 'an-external-idp-secret-for-tests-0123456789abc';
const PASSWORD = 'correct horse battery staple';
const FAILED = { code: 'UNAUTHORIZED', message: 'The email or password is not correct' };

let app: TestApp;
let userIds: Record<string, string> = {};
let next = 1;

/** A user with a password (or none), inserted as the owner: there is no sign-up API besides invitations. */
async function user(label: string, password: string | null = PASSWORD): Promise<string> {
  const email = `${label}-${next++}@sign-in.test`;
  const [row] = await ownerQuery(app.database.ownerUrl, 'insert into users (tenant_id, email, name, password_hash) values ($1, $2, $3, $4) returning id', [
    app.bootstrap.tenantId,
    email,
    label,
    password === null ? null : await hashPassword(password),
  ]);
  userIds[email] = row.id;
  return email;
}

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

/** A PHC string of `password` exactly as given (no normalisation), at the given cost. */
function phc(password: string, cost: { memory: number; passes: number }): string {
  const salt = randomBytes(16);
  const hash = argon2Sync('argon2id', { message: password, nonce: salt, memory: cost.memory, passes: cost.passes, parallelism: 1, tagLength: 32 });
  return `$argon2id$v=19$m=${cost.memory},t=${cost.passes},p=1$${b64(salt)}$${b64(hash)}`;
}

/** Whether `encoded` is a hash of `password` exactly as given. */
function hashes(password: string, encoded: string): boolean {
  const [, , , costs, salt, hash] = encoded.split('$');
  const [memory, passes, parallelism] = costs!.split(',').map((part) => Number(part.split('=')[1]));
  const derived = argon2Sync('argon2id', { message: password, nonce: Buffer.from(salt!, 'base64'), memory: memory!, passes: passes!, parallelism: parallelism!, tagLength: 32 });
  return b64(derived) === hash;
}

async function userWithHash(label: string, passwordHash: string): Promise<string> {
  const email = `${label}-${next++}@sign-in.test`;
  await ownerQuery(app.database.ownerUrl, 'insert into users (tenant_id, email, name, password_hash) values ($1, $2, $3, $4)', [app.bootstrap.tenantId, email, label, passwordHash]);
  return email;
}

const storedHash = async (email: string): Promise<string> =>
  (await ownerQuery(app.database.ownerUrl, 'select password_hash from users where email = $1', [email]))[0].password_hash;

/** Each test signs in from its own loopback address, so throttling in one never bleeds into another. */
let lastAddress = 1;
const newAddress = () => `127.0.0.${++lastAddress}`;
const login = (from: string, email: string, password: string) => callFrom(from, app.url, '/api/auth/login', { email, password });

beforeAll(async () => {
  app = await startTestApp({
    env: {
      JWT_SECRET,
      JWT_ISSUER: 'https://idp.test',
      JWT_AUDIENCE: 'specwright',
      RATE_LIMIT_GENERAL_PER_MINUTE: '1000',
      LOGIN_FAILURES_PER_EMAIL_AND_ADDRESS: '5',
      LOGIN_FAILURES_PER_ADDRESS: '12',
      LOGIN_FAILURES_PER_EMAIL: '8',
    },
  });
});
afterAll(() => app?.stop());

describe('POST /api/auth/login', () => {
  it('returns a 15-minute session token that authenticates as the user', async () => {
    const email = await user('ada');
    const response = await login(newAddress(), email.toUpperCase(), PASSWORD);
    expect(response.status, response.text).toBe(200);
    const data = response.body.data;
    expect(data).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresAt: expect.any(String), expiresIn: 900 });
    const lifetime = Date.parse(data.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(14 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(15 * 60_000);
    expect(decodeProtectedHeader(data.accessToken)).toMatchObject({ alg: 'HS256', typ: 'at+jwt' });
    expect(decodeJwt(data.accessToken)).toMatchObject({ sub: userIds[email], iss: 'urn:specwright:session', aud: 'urn:specwright:api' });

    const me = await call(app.url, '/api/me', { headers: { authorization: `Bearer ${data.accessToken}` } });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ userId: userIds[email], tenantId: app.bootstrap.tenantId, email, authenticatedBy: 'jwt' });
  });

  it('answers a wrong password, an unknown email and a user without a password with the same 401', async () => {
    const from = newAddress();
    const withPassword = await user('bob');
    const withoutPassword = await user('carl', null);
    const responses = [
      await login(from, withPassword, 'not the password at all'),
      await login(from, 'nobody@sign-in.test', PASSWORD),
      await login(from, withoutPassword, PASSWORD),
      await login(from, withoutPassword, ''),
    ];
    expect(responses.map((r) => r.status)).toEqual([401, 401, 401, 400]);
    for (const response of responses.slice(0, 3)) expect(response.body.error).toEqual(FAILED);
  });

  it('takes a password however its accents were typed (Unicode NFKC, as NIST SP 800-63B asks)', async () => {
    const composed = 'Caf\u00e9-Passw\u00f6rd-1';
    const decomposed = composed.normalize('NFD');
    expect(decomposed).not.toBe(composed);
    const setComposed = await user('nfc', composed);
    const setDecomposed = await user('nfd', decomposed);
    for (const [email, typed] of [
      [setComposed, decomposed],
      [setComposed, composed],
      [setDecomposed, composed],
    ] as const) {
      expect((await login(newAddress(), email, typed)).status).toBe(200);
    }
    expect((await login(newAddress(), setComposed, 'Cafe-Passwort-1')).status).toBe(401);
  });

  it('still takes a password stored before passwords were normalised, exactly as it was set, and then stores it normalised', async () => {
    // A hash of the password as typed, as stored before NFKC: full-width letters, a combining accent, a ligature.
    for (const password of ['\uff30\uff41\uff53\uff53\uff37\uff4f\uff52\uff44\uff11\uff12\uff13', 'cafe\u0301-au-lait-42', '\ufb01nancial-\ufb01les']) {
      expect(password.normalize('NFKC')).not.toBe(password);
      const legacy = phc(password, { memory: 19_456, passes: 2 });
      const email = await userWithHash('legacy', legacy);
      expect((await login(newAddress(), email, 'something-else-entirely')).status).toBe(401);
      expect(await storedHash(email), 'a failed sign-in changes nothing').toBe(legacy);

      expect((await login(newAddress(), email, password)).status, password).toBe(200);
      const replaced = await storedHash(email);
      expect(replaced).not.toBe(legacy);
      expect(hashes(password.normalize('NFKC'), replaced), 'the new hash is of the normalised password').toBe(true);
      // Typed either way, it signs in, now without the fallback.
      expect((await login(newAddress(), email, password)).status).toBe(200);
      expect((await login(newAddress(), email, password.normalize('NFKC'))).status).toBe(200);
      expect(await storedHash(email)).toBe(replaced);
    }
  });

  it('stores a hash made at an older cost afresh at today\'s cost on the next sign-in, and leaves a current one alone', async () => {
    const old = phc(PASSWORD, { memory: 8_192, passes: 1 });
    const email = await userWithHash('old-cost', old);
    expect((await login(newAddress(), email, 'not the password at all')).status).toBe(401);
    expect(await storedHash(email)).toBe(old);
    expect((await login(newAddress(), email, PASSWORD)).status).toBe(200);
    const replaced = await storedHash(email);
    expect(replaced).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(hashes(PASSWORD, replaced)).toBe(true);

    const current = await user('current-cost');
    const before = await storedHash(current);
    expect((await login(newAddress(), current, PASSWORD)).status).toBe(200);
    expect(await storedHash(current)).toBe(before);
  });

  it('signs in all the same when the outdated hash cannot be replaced, and tries again next time', async () => {
    const old = phc(PASSWORD, { memory: 8_192, passes: 1 });
    const email = await userWithHash('stuck-hash', old);
    await ownerQuery(app.database.ownerUrl, `create function refuse_hash_update() returns trigger language plpgsql as $$ begin raise exception 'refused for the test'; end $$`);
    await ownerQuery(app.database.ownerUrl, `create trigger refuse_hash_update before update on users for each row when (old.email = '${email}') execute function refuse_hash_update()`);
    try {
      expect((await login(newAddress(), email, PASSWORD)).status).toBe(200);
      expect(await storedHash(email)).toBe(old);
      expect(app.rawLog.join('\n')).toContain('an outdated password hash could not be replaced');
    } finally {
      await ownerQuery(app.database.ownerUrl, 'drop trigger refuse_hash_update on users; drop function refuse_hash_update()');
    }
    expect((await login(newAddress(), email, PASSWORD)).status).toBe(200);
    expect(await storedHash(email)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('refuses malformed input with field-level errors', async () => {
    const response = await login(newAddress(), 'not-an-email', '');
    expect(response.status).toBe(400);
    expect(response.body.error.details.issues.map((i: { field: string }) => i.field).sort()).toEqual(['email', 'password']);
    const extra = await callFrom(newAddress(), app.url, '/api/auth/login', { email: 'a@b.test', password: 'x', tenantId: 'x' });
    expect(extra.status).toBe(400);
  });

  it('never writes a password or a session token to the log', async () => {
    const email = await user('dora');
    const wrong = 'a-wrong-password-that-must-not-be-logged';
    await login(newAddress(), email, wrong);
    const ok = await login(newAddress(), email, PASSWORD);
    const log = app.rawLog.join('\n');
    expect(log).not.toContain(PASSWORD);
    expect(log).not.toContain(wrong);
    expect(log).not.toContain(ok.body.data.accessToken);
    expect(log).toContain('/api/auth/login');
  });

  it('keeps a password out of the log when it is sent in a URL, on a method or a name in any letter case', async () => {
    const email = await user('urlsent');
    const secret = 'a-password-sent-in-a-query-string';
    const input = encodeURIComponent(JSON.stringify({ email, password: secret }));
    const batch = encodeURIComponent(JSON.stringify({ 0: { email, password: secret } }));
    const key = 'swk_abcdefghijkl_aKeyPastedIntoTheQueryString';
    for (const [path, status] of [
      [`/trpc/auth.login?input=${input}`, 404],
      [`/trpc/AUTH.LOGIN?batch=1&input=${batch}`, 404],
      [`/trpc/me.get,auth.login?batch=1&input=${batch}`, 400],
      // A GET of a path that takes only POST.
      [`/api/auth/login?password=${secret}&input=${input}`, 405],
      [`/api/projects?status=active&password=${secret}&${key}`, 400],
    ] as const) {
      const response = await call(app.url, path, { apiKey: app.bootstrap.apiKey });
      expect(response.status, path).toBe(status);
      // A refusal of what the query holds repeats neither a value nor a name that could be a secret.
      expect(response.text, path).not.toContain(secret);
      expect(response.text, path).not.toContain(key);
    }
    const log = app.rawLog.join('\n');
    expect(log).not.toContain(secret);
    expect(log).not.toContain(encodeURIComponent(secret));
    expect(log).not.toContain(key);
    // The requests were logged, their queries blanked; what a REST route declares is kept as sent.
    expect(log).toContain('"/trpc/auth.login?[redacted]"');
    expect(log).toContain('"/trpc/AUTH.LOGIN?[redacted]"');
    expect(log).toContain('"/api/auth/login?[redacted]&[redacted]"');
    expect(log).toContain('"/api/projects?status=active&[redacted]&[redacted]"');
  });
});

describe('session tokens beside the external IdP', () => {
  it("still accepts the IdP's tokens", async () => {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(app.bootstrap.userId).setIssuer('https://idp.test').setAudience('specwright').setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(JWT_SECRET));
    const response = await call(app.url, '/api/me', { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
  });

  it('refuses forged, expired, re-targeted and IdP-signed tokens that claim to be session tokens', async () => {
    const serviceKey = deriveSessionSigningKey(TEST_SERVER_SECRET);
    const session = (key: Uint8Array, change: (jwt: SignJWT) => SignJWT = (jwt) => jwt) =>
      change(
        new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).setSubject(app.bootstrap.userId).setIssuer('urn:specwright:session').setAudience('urn:specwright:api').setIssuedAt().setExpirationTime('5m'),
      ).sign(key);
    const genuine = await session(serviceKey);
    expect((await call(app.url, '/api/me', { headers: { authorization: `Bearer ${genuine}` } })).status).toBe(200);

    const cases = {
      signedWithIdpSecret: await session(new TextEncoder().encode(JWT_SECRET)),
      signedWithServerSecretItself: await session(new TextEncoder().encode(TEST_SERVER_SECRET)),
      expired: await session(serviceKey, (jwt) => jwt.setIssuedAt(Math.floor(Date.now() / 1000) - 3600).setExpirationTime(Math.floor(Date.now() / 1000) - 60)),
      otherAudience: await session(serviceKey, (jwt) => jwt.setAudience('specwright')),
      algNone: `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${genuine.split('.')[1]}.`,
    };
    for (const [name, token] of Object.entries(cases)) {
      const response = await call(app.url, '/api/me', { headers: { authorization: `Bearer ${token}` } });
      expect(response.status, name).toBe(401);
      expect(response.body.error.code).toBe('UNAUTHORIZED');
    }
    const expired = await call(app.url, '/api/me', { headers: { authorization: `Bearer ${cases.expired}` } });
    expect(expired.body.error.message).toBe('The session token has expired; sign in again');
  });

  it('stops working when the user is deleted', async () => {
    const email = await user('gone');
    const { body } = await login(newAddress(), email, PASSWORD);
    await ownerQuery(app.database.ownerUrl, 'delete from users where id = $1', [userIds[email]]);
    const response = await call(app.url, '/api/me', { headers: { authorization: `Bearer ${body.data.accessToken}` } });
    expect(response.status).toBe(401);
  });
});

describe('throttling failed sign-ins', () => {
  it('refuses the sixth attempt at one account from one address, with Retry-After, even with the right password', async () => {
    const email = await user('erin');
    const from = newAddress();
    for (let i = 0; i < 5; i += 1) expect((await login(from, email, `wrong-${i}`)).status).toBe(401);
    const refused = await login(from, email, PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);

    // Someone else's failures elsewhere do not lock the user out from their own address.
    expect((await login(newAddress(), email, PASSWORD)).status).toBe(200);
  });

  it('bounds guesses at one account from many addresses, which then blocks everyone until the window passes', async () => {
    const email = await user('fred');
    for (let i = 0; i < 8; i += 1) expect((await login(newAddress(), email, `wrong-${i}`)).status).toBe(401);
    expect((await login(newAddress(), email, PASSWORD)).status).toBe(429);
    // The budget counts only that account.
    expect((await login(newAddress(), await user('gina'), PASSWORD)).status).toBe(200);
  });

  it('bounds guesses from one address across many accounts', async () => {
    const from = newAddress();
    for (let i = 0; i < 12; i += 1) expect((await login(from, `spray-${i}@sign-in.test`, 'guess')).status).toBe(401);
    const victim = await user('hana');
    expect((await login(from, victim, PASSWORD)).status).toBe(429);
    expect((await login(newAddress(), victim, PASSWORD)).status).toBe(200);
  });

  it("forgets an address's failures on that account once the user signs in there", async () => {
    const email = await user('ivan');
    const from = newAddress();
    for (let i = 0; i < 4; i += 1) await login(from, email, 'wrong');
    expect((await login(from, email, PASSWORD)).status).toBe(200);
    for (let i = 0; i < 3; i += 1) expect((await login(from, email, 'wrong')).status).toBe(401);
    expect((await login(from, email, PASSWORD)).status).toBe(200);
  });

  it('lets no more than the budget through when guesses arrive at once', async () => {
    const email = await user('jack');
    const from = newAddress();
    const statuses = (await Promise.all(Array.from({ length: 10 }, (_, i) => login(from, email, `parallel-${i}`)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  });

  it('keeps no email address in the counters table', async () => {
    const keys = await ownerQuery(app.database.ownerUrl, "select key from rate_limits where key like 'login%'");
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((row) => row.key.includes('@'))).toEqual([]);
  });
});
