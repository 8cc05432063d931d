import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../control-plane/config.ts';
import { startService, type RunningService } from '../../control-plane/service.ts';
import type { HostCapability } from '../../kit-runtime/index.ts';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

/**
 * A kit run still going when the worker shuts down (past SHUTDOWN_GRACE_MS) is cancelled and ends
 * failed. Its user never asked for that: the execution must say the worker stopped, and that they
 * should start it again, not that "the run was cancelled" as if someone had cancelled it.
 */
let service: RunningService | undefined;
afterAll(async () => {
  await service?.stop().catch(() => {});
});

describe('a kit execution running when its worker shuts down', () => {
  it('ends failed, saying the worker shut down and that a new execution is needed', async () => {
    const database = await createTestDatabase();
    const reached = Promise.withResolvers<void>();
    // Waits, as a slow push would, until the run is over.
    const hold: HostCapability = {
      call: (_argument, { signal }) => {
        reached.resolve();
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }));
      },
    };
    const config = loadConfig({
      DATABASE_URL: database.ownerUrl,
      APP_DATABASE_URL: database.appUrl,
      DATA_DIR: await scratchDir('shutdown-cut'),
      SERVER_SECRET: TEST_SERVER_SECRET,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      SHUTDOWN_GRACE_MS: '1000',
      RATE_LIMIT_GENERAL_PER_MINUTE: '100000',
    });
    service = await startService(config, { mode: 'all', kitCapabilities: { hold } });
    const { apiKey, organizationId: orgId } = service.firstRun.bootstrap!;
    const url = service.url!;
    const kit = sampleKit({ id: 'held-at-apply', applyHook: 'async function apply(c, kit) { await kit.hold({}); return { applied: true }; }' });
    expect((await call(url, `/api/${orgId}/kits`, { apiKey, body: kit })).status).toBe(201);
    const projectId: string = (await call(url, '/api/projects', { apiKey, body: { name: 'Held' } })).body.data.id;
    const started = await call(url, `/api/${orgId}/kits/held-at-apply/execute`, { apiKey, body: sampleExecutionBody(projectId) });
    expect(started.status, started.text).toBe(201);
    await reached.promise;

    const stopping = service.stop();
    service = undefined;
    await stopping;

    const [execution] = await ownerQuery(database.ownerUrl, 'select status, error_message from kit_executions where id = $1', [started.body.data.executionId]);
    expect(execution.status).toBe('failed');
    expect(execution.error_message).toBe(
      'The worker running this execution shut down, so the run was stopped at APPLY. What APPLY had already sent (a git push its server received) may have been applied. Start a new execution.',
    );
  }, 60_000);
});
