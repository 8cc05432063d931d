import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SHUTDOWN_CLOSE_MARGIN_MS } from '../../control-plane/config.ts';

/** The environment as operators write it: empty means unset, numbers are whole numbers, timers fit a timer. */
describe('configuration', () => {
  it('reads an empty variable as unset, so the default applies (PORT= is not port 0)', () => {
    const config = loadConfig({ PORT: '', HOST: '  ', SHUTDOWN_GRACE_MS: '' });
    expect(config).toMatchObject({ port: 3000, host: '0.0.0.0', shutdownGraceMs: 15_000 });
  });

  it.each(['DATABASE_URL', 'APP_DATABASE_URL', 'DATA_DIR', 'SERVER_SECRET', 'JWT_SECRET', 'JWT_JWKS_URL'])('refuses an empty %s: a secret, address or path that failed to arrive, not a request for the default', (name) => {
    expect(() => loadConfig({ [name]: '' })).toThrow(new RegExp(`${name}: is set but empty`));
  });

  it.each(['JWT_ISSUER', 'JWT_AUDIENCE'])('refuses a %s that begins or ends with white space (a CRLF env file), which every token would fail to match', (name) => {
    expect(() => loadConfig({ [name]: 'https://id.example.com/\r' })).toThrow(new RegExp(`${name}: begins or ends with white space`));
    expect(loadConfig({ [name]: 'https://id.example.com/' }).jwt).toMatchObject({ [name === 'JWT_ISSUER' ? 'issuer' : 'audience']: 'https://id.example.com/' });
  });

  it('refuses an empty DATA_DIR rather than starting a fresh database in ./.specwright, away from the data', () => {
    expect(() => loadConfig({ DATA_DIR: '  ' })).toThrow(/^Invalid configuration:\n  DATA_DIR: is set but empty; give it a value or unset it$/);
  });

  it.each([['PORT', '0x10'], ['PORT', '1e3'], ['WORKER_CONCURRENCY', '2.5'], ['WORKER_CONCURRENCY', '51'], ['BODY_LIMIT_BYTES', '-1'], ['RATE_LIMIT_PER_HOUR', 'ten']])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}: `));
  });

  it.each(['SHUTDOWN_GRACE_MS', 'WORKER_HEARTBEAT_MS', 'WORKER_STALE_AFTER_MS'])('refuses %s beyond what a timer can wait (Node would fire it after 1 ms)', (name) => {
    expect(() => loadConfig({ [name]: '2147483648' })).toThrow(new RegExp(`${name}: .*2147483647`));
  });

  it('refuses a SHUTDOWN_GRACE_MS whose shutdown limit (grace + the margin to close connections) would not fit a timer', () => {
    const longest = 2_147_483_647 - SHUTDOWN_CLOSE_MARGIN_MS;
    expect(loadConfig({ SHUTDOWN_GRACE_MS: String(longest) }).shutdownGraceMs + SHUTDOWN_CLOSE_MARGIN_MS).toBe(2_147_483_647);
    for (const value of ['2147483647', String(longest + 1)]) {
      expect(() => loadConfig({ SHUTDOWN_GRACE_MS: value })).toThrow(new RegExp(`^Invalid configuration:\\n  SHUTDOWN_GRACE_MS: must be at most ${longest}: shutdown adds 5000 ms to close connections, and a timer waits at most 2147483647 ms$`));
    }
  });

  it.each([
    ['JWT_ALGORITHMS', 'none', /^Invalid configuration:\n {2}JWT_ALGORITHMS: names no algorithm \(none is never accepted\), so every bearer token would be refused$/],
    ['JWT_ALGORITHMS', 'hs256', /^Invalid configuration:\n {2}JWT_ALGORITHMS: not a JWS algorithm: hs256 \(one of HS256, /],
    ['JWT_JWKS_URL', 'ftp://idp.example.com/jwks.json', /^Invalid configuration:\n {2}JWT_JWKS_URL: must be an http\(s\) URL$/],
  ])('refuses %s=%s, which refused every bearer token with a bare 401 once running', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('keeps the algorithms named, dropping none', () => {
    expect(loadConfig({ JWT_SECRET: 'x'.repeat(32), JWT_ALGORITHMS: ' HS512 , none,HS256' }).jwt.algorithms).toEqual(['HS512', 'HS256']);
    expect(loadConfig({ JWT_JWKS_URL: 'https://idp.example.com/jwks.json' }).jwt.algorithms).toEqual(['RS256', 'ES256', 'EdDSA']);
  });

  it('takes identity-provider tokens up to 24 hours old by default, or JWT_MAX_TOKEN_AGE_SECONDS', () => {
    expect(loadConfig({}).jwt.maxTokenAgeSeconds).toBe(86_400);
    expect(loadConfig({ JWT_MAX_TOKEN_AGE_SECONDS: '' }).jwt.maxTokenAgeSeconds).toBe(86_400);
    expect(loadConfig({ JWT_MAX_TOKEN_AGE_SECONDS: ' 3600 ' }).jwt.maxTokenAgeSeconds).toBe(3600);
  });

  it.each([
    ['24h', 'must be a whole number of seconds \\(decimal digits\\), like 86400 for 24 hours'],
    ['1e3', 'must be a whole number of seconds \\(decimal digits\\), like 86400 for 24 hours'],
    ['-600', 'must be a whole number of seconds \\(decimal digits\\), like 86400 for 24 hours'],
    ['0', 'must be at least 60 seconds: the value is in seconds, and a smaller one most likely meant minutes or hours'],
    ['24', 'must be at least 60 seconds: the value is in seconds, and a smaller one most likely meant minutes or hours'],
    ['2592001', 'must be at most 2592000 seconds \\(30 days\\): a longer limit would let a leaked bearer token work for months'],
  ])('refuses JWT_MAX_TOKEN_AGE_SECONDS=%s naming it', (value, message) => {
    expect(() => loadConfig({ JWT_MAX_TOKEN_AGE_SECONDS: value })).toThrow(new RegExp(`^Invalid configuration:\\n  JWT_MAX_TOKEN_AGE_SECONDS: ${message}$`));
  });

  it('refuses a heartbeat that is not well inside the stale threshold (a live worker would read as dead)', () => {
    expect(() => loadConfig({ WORKER_HEARTBEAT_MS: '20000', WORKER_STALE_AFTER_MS: '3000' })).toThrow(/WORKER_HEARTBEAT_MS: .*WORKER_STALE_AFTER_MS/);
    expect(() => loadConfig({ WORKER_HEARTBEAT_MS: '16000' })).toThrow(/WORKER_HEARTBEAT_MS/);
    expect(loadConfig({ WORKER_HEARTBEAT_MS: '5000', WORKER_STALE_AFTER_MS: '12000' })).toMatchObject({ workerHeartbeatMs: 5000, workerStaleAfterMs: 12_000 });
  });
});
