import { randomUUID } from 'node:crypto';
import { parseCronItems, run, type Runner } from 'graphile-worker';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { createKitRuntime, isPublicHttpsRemote, isWithinRepository, type HostCapability } from '../../kit-runtime/index.ts';
import type { AiConfig } from '../config.ts';
import type { Database } from '../db/database.ts';
import { agentProviderFor } from '../domains/agents/agent-provider.ts';
import { createCredentialVault } from '../domains/kit-credentials/credential-vault.ts';
import { reapInterruptedExecutions } from '../domains/kit-executions/kit-execution-reaper.job.ts';
import type { Logger } from '../logger.ts';
import { workerLogger } from './worker-logger.ts';
import { maintenanceSchedule } from './maintenance.jobs.ts';
import { createTaskList } from './task-list.ts';
import { recordHeartbeat, removeHeartbeat } from './worker-heartbeat.repository.ts';

declare global {
  namespace GraphileConfig {
    interface Plugins {
      SpecwrightJobPoolPlugin: true;
    }
  }
}

export interface WorkerHandle {
  workerId: string;
  /** Stops taking jobs, lets running ones finish (or releases them) and stops the heartbeat. */
  stop(): Promise<void>;
}

/** How long a stopping worker waits for host calls its cancelled runs left running (see settleHostCalls). */
const HOST_CALLS_SETTLE_MS = 3_000;

export interface StartWorkerOptions {
  ownerPool: pg.Pool;
  ownerDb: Kysely<Database>;
  log: Logger;
  concurrency: number;
  serverSecret: string;
  heartbeatMs?: number;
  staleAfterMs?: number;
  kitCapabilities?: Record<string, HostCapability>;
  /** URL prefixes platform kits may push to; empty: any https URL. */
  gitAllowedRemotes?: string[];
  /**
   * How long a stop lets running jobs finish before their abort signal fires (a kit run is then
   * cancelled, its git pushes with it): SHUTDOWN_GRACE_MS. graphile-worker's own default is 5 s.
   */
  shutdownGraceMs?: number;
  /** Where agents' drafts come from (AI_PROVIDER and its settings). */
  ai: AiConfig;
}

/**
 * KIT_GIT_ALLOWED_REMOTES: a remote is allowed when it has a prefix's origin (scheme, host, port)
 * and its path is the prefix's path or a folder under it, as a git credential's repository binds.
 * Compared as text, `https://git.example.com` also let through https://git.example.com.attacker.net/,
 * and `…/team` let through `…/teamevil/` (and the credential pushed there with it).
 */
export function gitRemotePolicy(prefixes: string[]): (url: URL) => boolean {
  if (prefixes.length === 0) return isPublicHttpsRemote;
  return (url) => prefixes.some((prefix) => isWithinRepository(url, prefix));
}

/**
 * graphile-worker locks jobs under its pool's id, which it makes up itself; each of the pool's
 * workers awaits `onPoolStart` before taking its first job, so the id is on record before any
 * job is locked with it.
 */
function jobPoolPlugin(onPoolStart: (jobPoolId: string) => Promise<void>): GraphileConfig.Plugin {
  let started: Promise<void> | undefined;
  return {
    name: 'SpecwrightJobPoolPlugin',
    version: '1.0.0',
    worker: {
      hooks: {
        async startWorker(_ctx, { worker }) {
          // Once per pool, however many workers (concurrency) wait on it. Should it fail, the
          // next heartbeat records the id; a database that refuses it refuses jobs too.
          await (started ??= onPoolStart(worker.workerPool.id));
        },
      },
    },
  };
}

export async function startWorker(options: StartWorkerOptions): Promise<WorkerHandle> {
  const workerId = `worker-${randomUUID()}`;
  const { ownerDb, log } = options;
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  const staleAfterMs = options.staleAfterMs ?? 30_000;
  let jobPoolId: string | null = null;

  // The heartbeat comes first: executions this worker claims name it, and the reaper trusts it.
  // A beat that fails, lands late or starts late (the process was paused, its event loop stalled)
  // marks a gap, in which other live workers may not have beaten either. Starting is one too: a
  // worker started as the database returns from an outage would otherwise find every live
  // worker's heartbeat stale and fail the executions they are running.
  let lastGapAt = performance.now();
  let lastStart: number | undefined;
  const beat = async () => {
    const started = performance.now();
    if (lastStart !== undefined && started - lastStart > heartbeatMs * 1.5) lastGapAt = started;
    lastStart = started;
    try {
      await recordHeartbeat(ownerDb, workerId, jobPoolId);
    } catch (error) {
      lastGapAt = performance.now();
      throw error;
    }
    if (performance.now() - started > heartbeatMs) lastGapAt = performance.now();
  };
  await beat();
  const timer = setInterval(() => void beat().catch((error) => log.warn({ err: error }, 'worker heartbeat failed')), heartbeatMs);
  timer.unref();

  // One runtime per process: isolates are pooled per tenant and kit version across jobs.
  const kitRuntime = createKitRuntime({ onInternalError: (error) => log.error({ err: error }, 'kit runtime internal error') });
  const deps = {
    ownerDb,
    log,
    workerProcessId: workerId,
    workerStaleAfterMs: staleAfterMs,
    beatingSteadilyFor: (ms: number) => performance.now() - lastGapAt >= ms,
    kitRuntime,
    credentials: createCredentialVault(ownerDb, options.serverSecret, log),
    kitCapabilities: options.kitCapabilities ?? {},
    isAllowedGitRemote: gitRemotePolicy(options.gitAllowedRemotes ?? []),
    agents: { provider: agentProviderFor(options.ai), maxOutputTokens: options.ai.maxOutputTokens },
  };
  // Every worker looks for executions orphaned by a dead one every stale period, from its first
  // period on: only then have its own beats been steady for one (see lastGapAt).
  const reap = () => reapInterruptedExecutions(deps).catch((error) => log.warn({ err: error }, 'reaping interrupted executions failed'));
  const reaper = setInterval(() => void reap(), staleAfterMs);
  reaper.unref();

  const runner: Runner = await run({
    pgPool: options.ownerPool,
    concurrency: options.concurrency,
    noHandleSignals: true,
    ...(options.shutdownGraceMs === undefined ? {} : { gracefulShutdownAbortTimeout: options.shutdownGraceMs }),
    pollInterval: 1000,
    taskList: createTaskList(deps),
    parsedCronItems: parseCronItems(maintenanceSchedule),
    logger: workerLogger(log),
    preset: {
      plugins: [
        jobPoolPlugin(async (id) => {
          jobPoolId = id;
          await beat();
        }),
      ],
    },
  });
  log.info({ workerId, jobPoolId, concurrency: options.concurrency }, 'worker started');

  return {
    workerId,
    async stop() {
      clearInterval(reaper);
      await runner.stop();
      clearInterval(timer);
      // Host calls a cancelled run stopped waiting for end soon after (a clone being written out):
      // waited for, briefly, so the process does not exit leaving their temporary files behind.
      if (!(await kitRuntime.settleHostCalls(HOST_CALLS_SETTLE_MS))) log.warn('host calls of stopped kit runs were still running at shutdown');
      kitRuntime.close();
      await removeHeartbeat(ownerDb, workerId).catch(() => {});
      log.info({ workerId }, 'worker stopped');
    },
  };
}
