import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIPv6, type AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import { createAuthenticator } from './auth/authenticate.ts';
import { createJwtVerifier } from './auth/jwt-verifier.ts';
import { createSessionTokens } from './auth/session-token.ts';
import type { Principal } from './auth/principal.ts';
import { assertClusterServerSecret } from './bootstrap/cluster-secret.ts';
import { ensureE2eTestUser } from './bootstrap/e2e-test-user.ts';
import { announceBootstrap, runFirstRun, type FirstRunResult } from './bootstrap/first-run.ts';
import { assertDataDirIsDirectory } from './bootstrap/data-dir.ts';
import { assertAppDatabaseAccepts, assertCanListen, assertReachable, listenFailure } from './bootstrap/preflight.ts';
import { resolveServerSecret } from './bootstrap/server-secret.ts';
import { SHUTDOWN_CLOSE_MARGIN_MS, type Config } from './config.ts';
import { appRoleUrl, enableAppRoleLogin, ensureAppRoleExists } from './db/app-role.ts';
import { withBootLock } from './db/boot-lock.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded-postgres.ts';
import { createDatabase, type DatabaseHandle } from './db/kysely-client.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createApp } from './http/app.ts';
import { createDownloadLinks } from './http/download-links.ts';
import { createCredentialKeyMaker, ensureKeyRingStarted } from './domains/kit-credentials/credential-key-ring.ts';
import { createLoginThrottle } from './domains/users/login-throttle.ts';
import { registerBuiltInKits } from './domains/kits/builtin-kits.ts';
import type { HostCapability } from '../kit-runtime/index.ts';
import { startWorker, type WorkerHandle } from './jobs/worker.ts';
import { answerClientError } from './http/client-errors.ts';
import { answerUnmetExpectation } from './http/unmet-expectation.ts';
import { createLogger, type Logger } from './logger.ts';

export type ServiceMode = 'all' | 'api' | 'worker';

export interface StartServiceOptions {
  mode?: ServiceMode;
  logDestination?: DestinationStream;
  /** The logger to use (the CLI entry point makes its own before the start, to log signals during it). */
  log?: Logger;
  /** On the first run, log where the owner's API key file is (the CLI entry point does; tests do not). */
  announce?: boolean;
  /** Host functions kits may call from APPLY/VERIFY (e.g. committing to a git repository). */
  kitCapabilities?: Record<string, HostCapability>;
  /**
   * Called when the service can no longer work and must stop (the embedded PostgreSQL died): the
   * process should shut down and exit non-zero, so that whatever supervises it starts it again.
   */
  onFatal?: (reason: string) => void;
}

export interface RunningService {
  url: string | undefined;
  log: Logger;
  owner: DatabaseHandle;
  /** The app-role connection; absent in worker mode. */
  app: DatabaseHandle | undefined;
  firstRun: FirstRunResult;
  stop(): Promise<void>;
}

/**
 * Boots the service: the database (embedded when DATABASE_URL is unset), migrations and first run
 * under a cross-process lock, then the HTTP API and/or the job worker.
 */
export async function startService(config: Config, options: StartServiceOptions = {}): Promise<RunningService> {
  const mode = options.mode ?? 'all';
  const log = options.log ?? createLogger(config.logLevel, options.logDestination);
  const cleanups: ShutdownStep[] = [];
  const stopAll = () => runShutdown(cleanups.splice(0).reverse(), config.shutdownGraceMs + SHUTDOWN_CLOSE_MARGIN_MS, log);

  try {
    // What needs no database is checked first: a start that cannot listen or use DATA_DIR fails in
    // a moment, naming the variable, not after building a cluster and applying migrations.
    await assertDataDirIsDirectory(config.dataDir);
    if (mode !== 'worker') await assertCanListen(config);
    let ownerUrl = config.databaseUrl;
    if (!ownerUrl) {
      const embedded: EmbeddedDatabase = await startEmbeddedPostgres(config.dataDir);
      cleanups.push({ what: 'the embedded PostgreSQL', run: () => embedded.stop() });
      ownerUrl = embedded.ownerUrl;
      log.info({ port: embedded.port, dataDir: config.dataDir }, 'embedded PostgreSQL started');
      void embedded.lostUnexpectedly.then((why) => options.onFatal?.(`the embedded PostgreSQL stopped unexpectedly (${why})`));
    }
    // The owner connections serve the worker: they wait out a database that is briefly away.
    const connectTimeoutMs = config.databaseConnectTimeoutMs;
    // graphile-worker holds one connection to listen for jobs and each running job another, beside
    // the heartbeat's: a pool smaller than that makes jobs wait for connections (and it warns so).
    const ownerConnections = mode === 'api' ? 4 : Math.max(4, config.workerConcurrency + 2);
    const owner = createDatabase(ownerUrl, { max: ownerConnections, applicationName: 'specwright-owner', patientConnectMs: OWNER_CONNECT_PATIENCE_MS, connectTimeoutMs });
    cleanups.push(poolStep('the owner database connections', owner));
    // Before anything lands in DATA_DIR: a start that cannot reach its database leaves nothing behind.
    if (config.databaseUrl) await assertReachable(owner.pool, 'DATABASE_URL', config.databaseUrl);
    // The requests' connection too, when the operator gives it: a wrong one would answer 503 to every request.
    // (The one derived from SERVER_SECRET is set up under the boot lock, and checked there.)
    const openAppDatabase = (url: string) => {
      const database = createDatabase(url, { max: 10, applicationName: 'specwright-api', prepareStatements: true, connectTimeoutMs, statementTimeoutMs: config.databaseStatementTimeoutMs });
      cleanups.push(poolStep('the API database connections', database));
      return database;
    };
    const givenAppDatabase = mode !== 'worker' && config.appDatabaseUrl ? openAppDatabase(config.appDatabaseUrl) : undefined;
    if (givenAppDatabase) await assertAppDatabaseAccepts(givenAppDatabase.pool, config.appDatabaseUrl!, log);

    const serverSecret = await resolveServerSecret(config.serverSecret, config.dataDir);
    if (serverSecret.source === 'data-dir' && config.databaseUrl) {
      log.warn('SERVER_SECRET is not set: using one kept in DATA_DIR; several API nodes must share one SERVER_SECRET');
    }
    // Requests run as the app role. Without APP_DATABASE_URL its password derives from
    // SERVER_SECRET, so every node must share that secret (or all set APP_DATABASE_URL).
    const setsAppRolePassword = mode !== 'worker' && !config.appDatabaseUrl;
    const { firstRun, appRolePassword } = await withBootLock(owner.pool, async () => {
      await ensureAppRoleExists(owner.db);
      await assertClusterServerSecret({ owner: owner.db, ownerUrl: ownerUrl!, serverSecret, dataDir: config.dataDir, setsAppRolePassword });
      const password = setsAppRolePassword ? await enableAppRoleLogin(owner.db, serverSecret.secret) : undefined;
      await migrateToLatest(owner.db, owner.pool, (migrations) => log.info({ migrations }, 'applying database migrations; the service starts when they are done'));
      await ensureKeyRingStarted(owner.db, serverSecret.secret);
      const builtIns = await registerBuiltInKits(owner.db, log);
      if (builtIns.length > 0) log.info({ kits: builtIns }, 'built-in kits registered');
      return { firstRun: await runFirstRun(owner.db, config.dataDir), appRolePassword: password };
    });
    if (firstRun.bootstrap && options.announce) announceBootstrap(log, config.dataDir);

    let worker: WorkerHandle | undefined;
    let workerStopping: Promise<void> | undefined;
    const stopWorker = () => (workerStopping ??= worker!.stop());
    if (mode !== 'api') {
      worker = await startWorker({
        ownerPool: owner.pool,
        ownerDb: owner.db,
        log,
        concurrency: config.workerConcurrency,
        serverSecret: serverSecret.secret,
        heartbeatMs: config.workerHeartbeatMs,
        staleAfterMs: config.workerStaleAfterMs,
        kitCapabilities: options.kitCapabilities ?? {},
        gitAllowedRemotes: config.kitGitAllowedRemotes,
        shutdownGraceMs: config.shutdownGraceMs,
        ai: config.ai,
      });
      cleanups.push({ what: 'the worker (its running jobs)', run: stopWorker });
    }

    let url: string | undefined;
    let app: DatabaseHandle | undefined;
    if (mode !== 'worker') {
      const appDatabase = givenAppDatabase ?? openAppDatabase(appRoleUrl(ownerUrl, appRolePassword!));
      app = appDatabase;
      const unchecked = unsetIdpClaims(config);
      if (unchecked.length > 0) {
        const claims = unchecked.map((name) => (name === 'JWT_ISSUER' ? 'issuer' : 'audience')).join(' or ');
        log.warn({ unset: unchecked }, `${unchecked.join(' and ')} not set: identity-provider tokens are accepted without checking their ${claims}; set them unless the key serves Specwright alone`);
      }
      if (config.jwt.jwksUrl && keysFetchedInTheClear(config.jwt.jwksUrl)) {
        // The origin only: a key set's URL may carry a token in its query.
        log.warn({ jwksOrigin: new URL(config.jwt.jwksUrl).origin }, 'JWT_JWKS_URL is plain http to another host: whoever is on the path to it can swap the keys and sign tokens for any user; use https');
      }
      let e2eTestUser: Principal | undefined;
      if (config.e2eTestMode) {
        log.warn('E2E_TEST_MODE is on: any request with X-E2E-Test-Mode: true is authenticated as the test user. Never run production like this.');
        e2eTestUser = await ensureE2eTestUser(owner.db);
      }
      // Session tokens are signed with a key derived from SERVER_SECRET, so any node verifies any node's.
      const sessionTokens = createSessionTokens(serverSecret.secret);
      // Authentication's look-ups are single statements: batched with the request's rate count.
      const authenticator = createAuthenticator({ db: appDatabase.batchedDb, verifyJwt: createJwtVerifier(config.jwt), sessionTokens, e2eTestUser });
      const server = await listen(createApp({ config, db: appDatabase.db, batches: appDatabase.batches, log, authenticator, sessionTokens, downloadLinks: createDownloadLinks(serverSecret.secret), loginThrottle: createLoginThrottle(appDatabase.batches, config.loginLimits, serverSecret.secret), credentialKeys: createCredentialKeyMaker(serverSecret.secret) }), config, log);
      const closeServer = closerOf(server);
      cleanups.push({ what: 'the HTTP server (requests in flight)', run: () => closeServer(config.shutdownGraceMs) });
      const address = server.address() as AddressInfo;
      url = `http://${reachableHost(config.host)}:${address.port}`;
      log.info({ url }, 'API listening');
    }

    // Run first at shutdown: the worker takes no new job from the moment shutdown begins, not only
    // once the HTTP server has drained (which may take the whole grace period).
    if (worker) cleanups.push({ what: 'the worker taking new jobs', run: async () => void stopWorker().catch(() => {}) });
    // First of all: a shutdown (the embedded database lost, say) does not wait for the database.
    cleanups.push({ what: 'waiting for the database', run: async () => owner.stopWaiting() });

    return { url, log, owner, app, firstRun, stop: stopAll };
  } catch (error) {
    await stopAll().catch((shutdownError: Error) => log.error(shutdownError.message));
    throw error;
  }
}

/** Where a client on this machine reaches HOST: an IPv6 address goes in brackets (`http://[::1]:3000`). */
function reachableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return isIPv6(host) ? `[${host}]` : host;
}

/** How long the owner connections (the worker's) wait for a database that is briefly away. */
const OWNER_CONNECT_PATIENCE_MS = 60_000;

interface ShutdownStep {
  what: string;
  /** What is still open, for the line logged when the step does not finish. */
  detail?: () => string;
  run: () => Promise<void>;
}

/** Thrown when shutdown did not finish in time; its message says what did not close. */
export class ShutdownTimeoutError extends Error {
  override name = 'ShutdownTimeoutError';
}

/**
 * Runs the steps in order, giving up after `limitMs` (a step waiting on a database that stopped
 * answering would otherwise wait forever): the process then exits and the OS closes what is left.
 */
function runShutdown(steps: ShutdownStep[], limitMs: number, log: Logger): Promise<void> {
  let finished = 0;
  const run = async () => {
    for (const step of steps) {
      await step.run().catch((error) => log.error({ err: error }, `shutdown step failed: ${step.what}`));
      finished += 1;
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // The first step not finished is the one running: it says what it still waits on.
      const pending = steps.slice(finished).map((step, index) => (index === 0 && step.detail ? `${step.what} (${step.detail()})` : step.what));
      reject(new ShutdownTimeoutError(`shutdown did not finish within ${limitMs / 1000} s; not closed: ${pending.join(', ')}`));
    }, limitMs);
    run().then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function poolStep(what: string, database: DatabaseHandle): ShutdownStep {
  const { pool } = database;
  const run = async () => {
    await database.db.destroy();
    // Kysely ends the pool only if it used it itself; the rate limiter and boot checks use it directly.
    if (!pool.ending) await pool.end();
  };
  return { what, detail: () => `${pool.totalCount - pool.idleCount} of ${pool.totalCount} still in use`, run };
}

/** The IdP claims left unchecked because their expected value is not configured (none without an IdP). */
function unsetIdpClaims(config: Config): string[] {
  if (!config.jwt.secret && !config.jwt.jwksUrl) return [];
  return [config.jwt.issuer ? null : 'JWT_ISSUER', config.jwt.audience ? null : 'JWT_AUDIENCE'].filter((name): name is string => name !== null);
}

/** A key set fetched over plain http from anywhere but this machine (loopback is a local IdP or a test). */
function keysFetchedInTheClear(jwksUrl: string): boolean {
  const { protocol, hostname } = new URL(jwksUrl);
  return protocol === 'http:' && !(hostname === 'localhost' || hostname === '[::1]' || /^127\./.test(hostname));
}

function listen(app: ReturnType<typeof createApp>, config: Config, log: Logger): Promise<Server> {
  return new Promise((resolve, reject) => {
    // A client that holds a connection without sending (slowloris) or without reading (a download
    // left unread) holds a file handle and memory: headers must arrive in time, the whole request
    // too (a 10 MiB upload included), and a connection with nothing moving is closed. Timeouts are
    // checked every second rather than Node's 30 s.
    const { headersMs, requestMs, idleMs } = config.httpTimeouts;
    const server = createServer({ headersTimeout: headersMs, requestTimeout: Math.max(requestMs, headersMs), connectionsCheckingInterval: 1_000 }, app);
    // Longer than a load balancer's idle timeout (60 s is common), so it closes first.
    server.keepAliveTimeout = Math.min(65_000, idleMs);
    server.setTimeout(idleMs, (socket) => socket.destroy());
    server.on('clientError', answerClientError(log));
    // Without a listener, Node answers an Expect other than 100-continue with a bare 417 itself.
    server.on('checkExpectation', answerUnmetExpectation(log, config.bodyLimitBytes));
    server.once('error', (error) => reject(listenFailure(error, config)));
    server.listen(config.port, config.host, () => resolve(server));
  });
}

/**
 * How to close the server: stop accepting connections and wait for in-flight requests, up to the
 * grace period. Each response still to be sent then says `Connection: close`, so its connection
 * closes once it is answered; kept alive, every such connection held shutdown for the whole grace
 * period. Call it right after listening, so it sees every response.
 */
function closerOf(server: Server): (graceMs: number) => Promise<void> {
  const inFlight = new Set<ServerResponse>();
  let closing = false;
  const closeAfterAnswering = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (closing) return closeAfterAnswering(res);
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  return (graceMs) =>
    new Promise((resolve) => {
      closing = true;
      inFlight.forEach(closeAfterAnswering);
      const force = setTimeout(() => server.closeAllConnections(), graceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
}
