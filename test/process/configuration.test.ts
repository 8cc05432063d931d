import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../control-plane/config.ts';

/** The environment as operators write it: empty means unset, numbers are whole numbers, timers fit a timer. */
describe('configuration', () => {
  it('reads an empty variable as unset, so the default applies (PORT= is not port 0, DATA_DIR= is not the current directory)', () => {
    const config = loadConfig({ PORT: '', DATA_DIR: '', HOST: '  ', SHUTDOWN_GRACE_MS: '' });
    expect(config).toMatchObject({ port: 3000, dataDir: './.specwright', host: '0.0.0.0', shutdownGraceMs: 15_000 });
  });

  it.each(['DATABASE_URL', 'APP_DATABASE_URL', 'SERVER_SECRET', 'JWT_SECRET', 'JWT_JWKS_URL'])('refuses an empty %s: a secret or address that failed to arrive, not a request for the default', (name) => {
    expect(() => loadConfig({ [name]: '' })).toThrow(new RegExp(`${name}: is set but empty`));
  });

  it.each([['PORT', '0x10'], ['PORT', '1e3'], ['WORKER_CONCURRENCY', '2.5'], ['BODY_LIMIT_BYTES', '-1'], ['RATE_LIMIT_PER_HOUR', 'ten']])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}: `));
  });

  it.each(['SHUTDOWN_GRACE_MS', 'WORKER_HEARTBEAT_MS', 'WORKER_STALE_AFTER_MS'])('refuses %s beyond what a timer can wait (Node would fire it after 1 ms)', (name) => {
    expect(() => loadConfig({ [name]: '2147483648' })).toThrow(new RegExp(`${name}: .*2147483647`));
  });

  it('refuses a heartbeat that is not well inside the stale threshold (a live worker would read as dead)', () => {
    expect(() => loadConfig({ WORKER_HEARTBEAT_MS: '20000', WORKER_STALE_AFTER_MS: '3000' })).toThrow(/WORKER_HEARTBEAT_MS: .*WORKER_STALE_AFTER_MS/);
    expect(() => loadConfig({ WORKER_HEARTBEAT_MS: '16000' })).toThrow(/WORKER_HEARTBEAT_MS/);
    expect(loadConfig({ WORKER_HEARTBEAT_MS: '5000', WORKER_STALE_AFTER_MS: '12000' })).toMatchObject({ workerHeartbeatMs: 5000, workerStaleAfterMs: 12_000 });
  });
});
