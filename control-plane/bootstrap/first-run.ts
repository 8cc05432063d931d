import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { createTenantWithOwner } from '../domains/tenants/tenants.service.ts';
import type { CreatedTenant } from '../domains/tenants/tenants.schema.ts';

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
  const bootstrap = await owner.transaction().execute((trx) =>
    createTenantWithOwner(trx, {
      name: 'Default tenant',
      ownerEmail: BOOTSTRAP_OWNER_EMAIL,
      ownerName: 'Owner',
      ownerIsPlatformAdmin: true,
      features: { kits_enabled: true },
    }),
  );
  await mkdir(dataDir, { recursive: true });
  await writeFile(join(dataDir, 'bootstrap.json'), `${JSON.stringify(bootstrap, null, 2)}\n`, { mode: 0o600 });
  return { created: true, bootstrap };
}

export function announceBootstrap(bootstrap: CreatedTenant, dataDir: string): void {
  // Printed once, to the terminal only: logs never carry keys (they are redacted there).
  process.stdout.write(
    [
      '',
      '  Specwright first run: created a tenant, an organization and an owner (platform admin).',
      `  Owner API key (shown once): ${bootstrap.apiKey}`,
      `  Also written to ${join(dataDir, 'bootstrap.json')} (mode 0600).`,
      '',
      '',
    ].join('\n'),
  );
}
