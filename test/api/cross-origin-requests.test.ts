import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../control-plane/config.ts';
import { call, type ApiResponse } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const APP_ORIGIN = 'https://app.example.com';
const DEV_ORIGIN = 'http://localhost:5173';
const OTHER_ORIGIN = 'https://elsewhere.example.com';

let listed: TestApp;
let anyOrigin: TestApp;
let none: TestApp;
beforeAll(async () => {
  [listed, anyOrigin, none] = await Promise.all([
    startTestApp({ env: { CORS_ALLOWED_ORIGINS: `${APP_ORIGIN}, ${DEV_ORIGIN}` } }),
    startTestApp({ env: { CORS_ALLOWED_ORIGINS: '*' } }),
    startTestApp(),
  ]);
});
afterAll(() => Promise.all([listed?.stop(), anyOrigin?.stop(), none?.stop()]));

/** A browser's preflight for a script's POST with a JSON body and an API key. */
const preflight = (app: TestApp, path: string, origin: string) =>
  call(app.url, path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key' },
  });

const corsHeaders = (response: ApiResponse) =>
  Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));

describe('cross-origin requests from browser scripts (CORS_ALLOWED_ORIGINS)', () => {
  it('answers a listed origin\'s preflight 204, before authentication and rate counting, with what its script may send', async () => {
    for (const path of ['/api/projects', '/trpc/projects.create']) {
      const answer = await preflight(listed, path, DEV_ORIGIN);
      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBe(DEV_ORIGIN);
      expect(answer.headers.get('access-control-allow-methods')).toBe('GET,HEAD,POST,PUT,PATCH,DELETE');
      expect(answer.headers.get('access-control-allow-headers')).toBe('Authorization,X-API-Key,Content-Type,X-Tenant-ID,X-Request-ID,Range,If-Range');
      expect(answer.headers.get('access-control-max-age')).toBe('600');
      expect(answer.headers.get('vary')).toMatch(/\bOrigin\b/);
      // No cookies are credentials here, so no credentials mode is offered.
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
      // Not counted: a preflight carries no credential to count it against.
      expect(answer.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const counted = await ownerQuery(listed.database.ownerUrl, "select count(*)::int as n from rate_limits where key like 'general:ip:%'");
    expect(counted).toEqual([{ n: 0 }]);
  });

  it('lets a listed origin\'s script read answers, refusals included, and the headers it needs', async () => {
    const created = await call(listed.url, '/api/projects', { apiKey: listed.bootstrap.apiKey, headers: { origin: APP_ORIGIN }, body: { name: 'From the browser' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(created.headers.get('access-control-expose-headers')).toBe(
      'X-Request-ID,X-RateLimit-Limit,X-RateLimit-Remaining,X-RateLimit-Reset,Retry-After,Allow,WWW-Authenticate,Content-Disposition,Content-Range,Accept-Ranges,ETag,Digest',
    );
    const refused = await call(listed.url, '/api/projects', { headers: { origin: APP_ORIGIN } });
    expect([refused.status, refused.body.error.code, refused.headers.get('access-control-allow-origin')]).toEqual([401, 'UNAUTHORIZED', APP_ORIGIN]);
    // The 401's challenge is one of the headers the script may read.
    expect([refused.headers.get('www-authenticate'), refused.headers.get('access-control-expose-headers')?.split(',').includes('WWW-Authenticate')]).toEqual(['Bearer realm="specwright"', true]);
    const viaTrpc = await call(listed.url, '/trpc/me.get', { apiKey: listed.bootstrap.apiKey, headers: { origin: APP_ORIGIN } });
    expect([viaTrpc.status, viaTrpc.headers.get('access-control-allow-origin')]).toEqual([200, APP_ORIGIN]);
  });

  it('says nothing to an origin it does not list, nor to a caller sending no Origin: their OPTIONS answers 405 as before', async () => {
    for (const origin of [OTHER_ORIGIN, `${APP_ORIGIN}.evil.example`, 'https://APP.example.com', 'null']) {
      const answer = await preflight(listed, '/api/projects', origin);
      expect([answer.status, answer.headers.get('allow'), corsHeaders(answer)]).toEqual([405, 'GET, HEAD, POST', {}]);
      const read = await call(listed.url, '/api/projects', { apiKey: listed.bootstrap.apiKey, headers: { origin } });
      expect([read.status, corsHeaders(read)]).toEqual([200, {}]);
    }
    const withoutOrigin = await call(listed.url, '/api/projects', { method: 'OPTIONS' });
    expect([withoutOrigin.status, corsHeaders(withoutOrigin)]).toEqual([405, {}]);
  });

  it('allows every origin with "*", without naming it back', async () => {
    const answer = await preflight(anyOrigin, '/api/projects', OTHER_ORIGIN);
    expect([answer.status, answer.headers.get('access-control-allow-origin')]).toEqual([204, '*']);
    const read = await call(anyOrigin.url, '/api/me', { apiKey: anyOrigin.bootstrap.apiKey, headers: { origin: OTHER_ORIGIN } });
    expect([read.status, read.headers.get('access-control-allow-origin')]).toEqual([200, '*']);
  });

  it('allows no origin when the variable is not set: no CORS header for anyone, preflights 405', async () => {
    const answer = await preflight(none, '/api/projects', APP_ORIGIN);
    expect([answer.status, corsHeaders(answer)]).toEqual([405, {}]);
    const read = await call(none.url, '/api/me', { apiKey: none.bootstrap.apiKey, headers: { origin: APP_ORIGIN } });
    expect([read.status, corsHeaders(read)]).toEqual([200, {}]);
  });

  it('refuses at start an entry that is not an origin as browsers send it, saying what to write', () => {
    const refusal = (value: string) => {
      try {
        loadConfig({ CORS_ALLOWED_ORIGINS: value });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error(`${value} was taken`);
    };
    expect(refusal('https://app.example.com/')).toMatch(/CORS_ALLOWED_ORIGINS: "https:\/\/app.example.com\/" is not an origin as browsers send it: write https:\/\/app.example.com$/);
    expect(refusal('https://App.Example.com')).toMatch(/write https:\/\/app.example.com$/);
    expect(refusal('https://app.example.com:443')).toMatch(/write https:\/\/app.example.com$/);
    expect(refusal('https://app.example.com/login')).toMatch(/write https:\/\/app.example.com$/);
    expect(refusal('app.example.com')).toMatch(/"app.example.com" is not an http\(s\) origin/);
    expect(refusal('ftp://files.example.com')).toMatch(/"ftp:\/\/files.example.com" is not an http\(s\) origin/);
    expect(refusal(`*, ${APP_ORIGIN}`)).toMatch(/"\*" stands alone/);
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: ` ${APP_ORIGIN} ,${DEV_ORIGIN},` }).corsAllowedOrigins).toEqual([APP_ORIGIN, DEV_ORIGIN]);
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: '*' }).corsAllowedOrigins).toBe('*');
    expect(loadConfig({}).corsAllowedOrigins).toEqual([]);
  });
});
