import type { JobHelpers } from 'graphile-worker';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';

/** What a task handler may use; the owner connection, because workers act for every tenant. */
export interface JobDeps {
  ownerDb: Kysely<Database>;
  log: Logger;
}

export interface JobDefinition<Payload> {
  name: string;
  payload: z.ZodType<Payload>;
  run(payload: Payload, deps: JobDeps, helpers: JobHelpers): Promise<void>;
}

export function defineJob<Payload>(definition: JobDefinition<Payload>): JobDefinition<Payload> {
  return definition;
}
