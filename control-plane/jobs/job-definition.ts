import type { JobHelpers } from 'graphile-worker';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { HostCapability, KitRuntime } from '../../kit-runtime/index.ts';
import type { AiProvider } from '../ai/ai-provider.ts';
import type { Database } from '../db/database.ts';
import type { CredentialVault } from '../domains/kit-credentials/credential-vault.ts';
import type { Logger } from '../logger.ts';

/** What a task handler may use; the owner connection, because workers act for every tenant. */
export interface JobDeps {
  ownerDb: Kysely<Database>;
  log: Logger;
  /** This worker process, as it appears in worker_heartbeats. */
  workerProcessId: string;
  workerStaleAfterMs: number;
  /**
   * Whether this worker's heartbeats have landed, each in time, for the last `ms`: a worker that
   * could not beat lately (the database away) cannot tell a dead worker from one that could not
   * beat either. Absent where no heartbeat runs (a job run by hand).
   */
  beatingSteadilyFor?: (ms: number) => boolean;
  kitRuntime: KitRuntime;
  credentials: CredentialVault;
  /** Host functions kits may call (for APPLY/VERIFY, as each capability declares). */
  kitCapabilities: Record<string, HostCapability>;
  /** Which git remotes platform kits may push to. */
  isAllowedGitRemote: (url: URL) => boolean;
  /** Where agents' drafts come from (AI_PROVIDER), and the most one call may write (AI_MAX_OUTPUT_TOKENS). */
  agents: { provider: AiProvider; maxOutputTokens: number };
}

export interface JobDefinition<Payload> {
  name: string;
  payload: z.ZodType<Payload>;
  run(payload: Payload, deps: JobDeps, helpers: JobHelpers): Promise<void>;
}

export function defineJob<Payload>(definition: JobDefinition<Payload>): JobDefinition<Payload> {
  return definition;
}
