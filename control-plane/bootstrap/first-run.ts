import { join, resolve } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { createTenantWithOwner } from '../domains/tenants/tenants.service.ts';
import type { CreatedTenant } from '../domains/tenants/tenants.schema.ts';
import { replaceSecretFile } from './secret-file.ts';
import { makeDataDir } from './data-dir.ts';

export const BOOTSTRAP_OWNER_EMAIL = 'owner@specwright.local';

export interface FirstRunResult {
  created: boolean;
  bootstrap?: CreatedTenant;
}

/**
 * On an empty database: a tenant, its organization, an owner who is a platform admin, and the
 * owner's API key, written to `<dataDir>/bootstrap.json` (0600). Later starts create nothing.
 * The caller holds the boot lock, so two processes starting together cannot both create one.
 */
export async function runFirstRun(owner: Kysely<Database>, dataDir: string): Promise<FirstRunResult> {
  const existing = await owner.selectFrom('tenants').select('id').limit(1).executeTakeFirst();
  if (existing) return { created: false };
  // The key is saved before the tenant commits: should saving fail, or the process die in between,
  // there is no tenant and the next start tries again, never a tenant whose only key was lost.
  await makeDataDir(dataDir);
  const bootstrap = await owner.transaction().execute(async (trx) => {
    const created = await createTenantWithOwner(trx, {
      name: 'Default tenant',
      ownerEmail: BOOTSTRAP_OWNER_EMAIL,
      ownerName: 'Owner',
      ownerIsPlatformAdmin: true,
      features: { kits_enabled: true },
    });
    await replaceSecretFile(join(dataDir, 'bootstrap.json'), `${JSON.stringify(created, null, 2)}\n`);
    return created;
  });
  return { created: true, bootstrap };
}

/**
 * Says where the owner's key is, never the key: a service's output is often collected as its log,
 * and a platform admin's key on a log line is anyone's who reads the logs. A log line like any
 * other, so the output stays one JSON line per entry; at warn, so that LOG_LEVEL=warn still says
 * it (a first run creates a platform admin, which an operator should notice anyway).
 */
export function announceBootstrap(log: Logger, dataDir: string): void {
  const file = resolve(dataDir, 'bootstrap.json');
  log.warn({ bootstrapFile: file }, `first run: created a tenant, an organization and an owner (platform admin); the owner's API key is in ${file} (mode 0600), as "apiKey"`);
}
