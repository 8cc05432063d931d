import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../control-plane/domains/users/password-hash.ts';
import { rateLimitClassFor } from '../../control-plane/http/rate-limit.ts';
import { call } from '../helpers/http.ts';
import { callFrom } from '../helpers/http-from.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createUserInTenant } from '../helpers/tenant-fixtures.ts';

const env = { RATE_LIMIT_GENERAL_PER_MINUTE: '4', RATE_LIMIT_AGENT_PER_MINUTE: '1' };
let first: TestApp;
let second: TestApp;
beforeAll(async () => {
  first = await startTestApp({ env });
  // A second API process on the same database: the counters must be shared.
  second = await startTestApp({ env, database: first.database });
});
afterAll(async () => {
  await second?.stop();
  await first?.stop();
});

describe('rate limits', () => {
  it('classifies paths as the design says', () => {
    expect(rateLimitClassFor('/api/agents/generate-spec')).toBe('agent');
    expect(rateLimitClassFor('/trpc/agents.generateSpec')).toBe('agent');
    expect(rateLimitClassFor('/api/agents/execution/0b7c/resume')).toBe('agent');
    expect(rateLimitClassFor('/trpc/agents.resume')).toBe('agent');
    expect(rateLimitClassFor('/trpc/agents.executionStatus,agents.generateSpec')).toBe('agent');
    // Following a run, or reading the agents' memory, does not use up the budget for starting one.
    expect(rateLimitClassFor('/api/agents/execution/0b7c/status')).toBe('general');
    expect(rateLimitClassFor('/trpc/agents.executionStatus')).toBe('general');
    expect(rateLimitClassFor('/api/agents/memory')).toBe('general');
    expect(rateLimitClassFor('/api/specification/compile')).toBe('compilation');
    expect(rateLimitClassFor('/api/exports/compile')).toBe('compilation');
    expect(rateLimitClassFor('/api/exports/0b7c/download')).toBe('compilation');
    // tRPC, whatever its place in a batch.
    expect(rateLimitClassFor('/trpc/exports.download,me')).toBe('compilation');
    expect(rateLimitClassFor('/trpc/me,exports.download')).toBe('compilation');
    expect(rateLimitClassFor('/api/exports/0b7c')).toBe('general');
    expect(rateLimitClassFor('/api/discovery-chat')).toBe('discoveryChat');
    expect(rateLimitClassFor('/api/projects')).toBe('general');
  });

  it('counts per caller across API processes, with headers on every response and 429 + Retry-After beyond', async () => {
    const apiKey = first.bootstrap.apiKey;
    const responses = [];
    for (const app of [first, second, first, second]) responses.push(await call(app.url, '/api/me', { apiKey }));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(responses.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['3', '2', '1', '0']);
    for (const response of responses) {
      expect(response.headers.get('x-ratelimit-limit')).toBe('4');
      const reset = Number(response.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    }
    const refused = await call(second.url, '/api/me', { apiKey });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');

    // Anonymous callers are counted by address, separately from the key's budget.
    const anonymous = await call(first.url, '/api/health');
    expect(anonymous.status).toBe(200);
  });

  it('gives each class its own budget', async () => {
    // Anonymous calls are counted by address; this address has used one general call so far.
    const agentFirst = await call(first.url, '/api/agents/generate-spec');
    expect(agentFirst.headers.get('x-ratelimit-limit')).toBe('1');
    expect(agentFirst.headers.get('x-ratelimit-remaining')).toBe('0');
    const agentSecond = await call(second.url, '/api/agents/generate-spec');
    expect(agentSecond.status).toBe(429);
    const general = await call(first.url, '/api/health');
    expect(general.status).toBe(200);
    expect(general.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('counts a request whose credential does not authenticate against the client address, so made-up keys bring no fresh budget', async () => {
    const from = '127.0.0.40';
    const statuses = [];
    for (let i = 0; i < 5; i += 1) {
      // Public routes run for callers whose credentials were refused; each made-up credential is new.
      const headers: Record<string, string> = i % 2 ? { 'x-api-key': `swk_madeup${i}` } : { authorization: `Bearer made.up.${i}` };
      statuses.push((await callFrom(from, first.url, '/api/auth/login', { email: `guess-${i}@rate.test`, password: 'guess' }, headers)).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
  });

  it('counts every session token of a user against that user, across API processes, so signing in again brings no fresh budget', async () => {
    const email = 'many-sessions@rate.test';
    const password = 'correct horse battery staple';
    await ownerQuery(first.database.ownerUrl, 'insert into users (tenant_id, email, name, password_hash) values ($1, $2, $3, $4)', [
      first.bootstrap.tenantId,
      email,
      'Many Sessions',
      await hashPassword(password),
    ]);
    // Each sign-in from an address of its own, so the sign-ins spend no shared address budget.
    const signIn = async (from: string) => (await callFrom(from, first.url, '/api/auth/login', { email, password })).body.data.accessToken as string;
    const tokens = [await signIn('127.0.0.51'), await signIn('127.0.0.52'), await signIn('127.0.0.53'), await signIn('127.0.0.54')];
    expect(new Set(tokens).size).toBe(4);
    const responses = [];
    for (const [i, token] of tokens.entries()) responses.push(await call((i % 2 ? second : first).url, '/api/me', { headers: { authorization: `Bearer ${token}` } }));
    expect(responses.map((r) => `${r.status} ${r.headers.get('x-ratelimit-remaining')}`)).toEqual(['200 3', '200 2', '200 1', '200 0']);
    const fresh = await signIn('127.0.0.55');
    const refused = await call(first.url, '/api/me', { headers: { authorization: `Bearer ${fresh}` } });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: 'RATE_LIMITED' } });
  });

  it('counts every call of a tRPC batch, so batching does not multiply the budget', async () => {
    const { apiKey } = await createUserInTenant(first, (text, values) => ownerQuery(first.database.ownerUrl, text, values), first.bootstrap.tenantId, 'Batcher');
    const batch = (size: number) => call(first.url, `/trpc/${Array.from({ length: size }, () => 'me.get').join(',')}?batch=1`, { apiKey });
    const three = await batch(3);
    expect(three.status).toBe(200);
    expect(three.headers.get('x-ratelimit-remaining')).toBe('1');
    const two = await batch(2);
    expect(two.status).toBe(429);
    // The refused batch ran none of its calls and spent nothing: the one call left still fits.
    expect(two.headers.get('x-ratelimit-remaining')).toBe('1');
    const one = await batch(1);
    expect([one.status, one.headers.get('x-ratelimit-remaining')]).toEqual([200, '0']);

    // The batch's comma may be percent-encoded: tRPC decodes the path before splitting it.
    const other = await createUserInTenant(first, (text, values) => ownerQuery(first.database.ownerUrl, text, values), first.bootstrap.tenantId, 'Encoder');
    const encoded = await call(first.url, `/trpc/${Array.from({ length: 3 }, () => 'me.get').join('%2C')}?batch=1`, { apiKey: other.apiKey });
    expect(encoded.status).toBe(200);
    expect(encoded.body).toHaveLength(3);
    expect(encoded.headers.get('x-ratelimit-remaining')).toBe('1');

    // Routing ignores letter case, and so does the count: `/TRPC/` used to cost a batch one point.
    const shouter = await createUserInTenant(first, (text, values) => ownerQuery(first.database.ownerUrl, text, values), first.bootstrap.tenantId, 'Shouter');
    const upper = await call(first.url, `/TRPC/${Array.from({ length: 3 }, () => 'me.get').join(',')}?batch=1`, { apiKey: shouter.apiKey });
    expect(upper.status).toBe(200);
    expect(upper.body).toHaveLength(3);
    expect(upper.headers.get('x-ratelimit-remaining')).toBe('1');
    const refused = await call(first.url, '/Trpc/me.get,me.get?batch=1', { apiKey: shouter.apiKey });
    expect([refused.status, refused.body.error?.data?.code]).toEqual([429, 'RATE_LIMITED']);
  });

  it('charges a batch over the size limit one request, since it runs none of its calls', async () => {
    const { apiKey } = await createUserInTenant(first, (text, values) => ownerQuery(first.database.ownerUrl, text, values), first.bootstrap.tenantId, 'Oversize');
    const batch = (size: number) => call(first.url, `/trpc/${Array.from({ length: size }, () => 'me.get').join(',')}?batch=1`, { apiKey });
    // Charged per call, 51 calls spent a budget of 100 by half (here, of 4, it was refused as RATE_LIMITED).
    const oversize = await batch(51);
    expect([oversize.status, oversize.headers.get('x-ratelimit-remaining')]).toEqual([400, '3']);
    const three = await batch(3);
    expect([three.status, three.headers.get('x-ratelimit-remaining')]).toEqual([200, '0']);
  });
});
