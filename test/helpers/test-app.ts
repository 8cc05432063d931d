import { Writable } from 'node:stream';
import { loadConfig } from '../../control-plane/config.ts';
import type { CreatedTenant } from '../../control-plane/domains/tenants/tenants.schema.ts';
import { startService, type RunningService, type ServiceMode } from '../../control-plane/service.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';
import { TEST_SERVER_SECRET } from './test-constants.ts';
import { databasesInUse } from './response-log.ts';
import { scratchDir } from './scratch-dir.ts';

export interface TestApp {
  url: string;
  database: TestDatabase;
  dataDir: string;
  bootstrap: CreatedTenant;
  service: RunningService;
  /** Every JSON log line the service wrote, parsed. */
  logLines: Array<Record<string, unknown>>;
  /** Every raw log line, for searching for leaked secrets. */
  rawLog: string[];
  stop(): Promise<void>;
}

/** The real service (API by default) on its own cloned database, on an ephemeral port. */
export async function startTestApp(
  options: { env?: Record<string, string>; mode?: ServiceMode; database?: TestDatabase } = {},
): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const dataDir = await scratchDir('app');
  const rawLog: string[] = [];
  const logLines: Array<Record<string, unknown>> = [];
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        rawLog.push(line);
        logLines.push(JSON.parse(line));
      }
      done();
    },
  });
  const config = loadConfig({
    DATABASE_URL: database.ownerUrl,
    APP_DATABASE_URL: database.appUrl,
    DATA_DIR: dataDir,
    SERVER_SECRET: TEST_SERVER_SECRET,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    // Tests poll executions, bundles and jobs every 100 ms or so: in a loaded run, 100 requests a
    // minute (the default) was reached by polling alone, and a poll answered 429. Tests of the
    // limits set their own.
    RATE_LIMIT_GENERAL_PER_MINUTE: '100000',
    ...options.env,
  });
  const service = await startService(config, { mode: options.mode ?? 'api', logDestination });
  databasesInUse.add(database.ownerUrl);
  const bootstrap = service.firstRun.bootstrap ?? (await readBootstrapOf(options.database));
  bootstrapByDatabase.set(database.name, bootstrap);
  return {
    url: service.url ?? '',
    database,
    dataDir,
    bootstrap,
    service,
    logLines,
    rawLog,
    stop: () => service.stop(),
  };
}

const bootstrapByDatabase = new Map<string, CreatedTenant>();

async function readBootstrapOf(database: TestDatabase | undefined): Promise<CreatedTenant> {
  const known = database && bootstrapByDatabase.get(database.name);
  if (!known) throw new Error('A second app on a shared database needs the first one started in this file');
  return known;
}
