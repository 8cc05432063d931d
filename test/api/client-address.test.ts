import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../control-plane/config.ts';
import { clientAddressOf } from '../../control-plane/http/client-address.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Which address a request counts against: the socket's peer, or behind proxies named by
 * TRUST_PROXY what they forwarded; IPv6 by its /64 network.
 */
const env = { RATE_LIMIT_GENERAL_PER_MINUTE: '2' };
let direct: TestApp;
let proxied: TestApp;
beforeAll(async () => {
  direct = await startTestApp({ env });
  proxied = await startTestApp({ env: { ...env, TRUST_PROXY: 'loopback' }, database: direct.database });
});
afterAll(async () => {
  await proxied?.stop();
  await direct?.stop();
});

const remaining = async (app: TestApp, forwardedFor: string) =>
  (await call(app.url, '/api/health', { headers: { 'x-forwarded-for': forwardedFor } })).headers.get('x-ratelimit-remaining');

describe('the client address', () => {
  it('is the socket peer unless a trusted proxy forwarded it, so a client cannot choose its own', async () => {
    // Direct: the header is the client's word, ignored — both calls count against 127.0.0.1.
    expect([await remaining(direct, '203.0.113.1'), await remaining(direct, '203.0.113.2')]).toEqual(['1', '0']);
    // Behind a trusted loopback proxy, each forwarded client has its own budget.
    expect([await remaining(proxied, '198.51.100.1'), await remaining(proxied, '198.51.100.1'), await remaining(proxied, '198.51.100.2')]).toEqual(['1', '0', '1']);
  });

  it('counts IPv6 clients by their /64 network', async () => {
    expect(await remaining(proxied, '2001:db8:1:2::1')).toBe('1');
    expect(await remaining(proxied, '2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('0');
    expect(await remaining(proxied, '2001:db8:1:3::1')).toBe('1');
  });

  it.each([
    ['198.51.100.7', '198.51.100.7'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8::/64'],
    ['::1', '::/64'],
    ['not an address', 'unknown'],
    [undefined, 'unknown'],
  ])('%s counts as %s', (ip, expected) => {
    expect(clientAddressOf(ip)).toBe(expected);
  });

  it('reads TRUST_PROXY as a hop count or a list of proxies, and refuses "true", more than 10 hops and what it cannot read', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8, fd00::/8, 192.0.2.10' }).trustProxy).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.10']);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(ConfigError);
    // As many hops as any client cares to write is "true" by another name.
    expect(loadConfig({ TRUST_PROXY: '10' }).trustProxy).toBe(10);
    expect(() => loadConfig({ TRUST_PROXY: '11' })).toThrow(/TRUST_PROXY: a hop count is at most 10/);
    expect(() => loadConfig({ TRUST_PROXY: '99999999999999999999' })).toThrow(/TRUST_PROXY: a hop count is at most 10/);
    expect(() => loadConfig({ TRUST_PROXY: 'loopback,my-proxy' })).toThrow(/not understood: my-proxy/);
  });
});
