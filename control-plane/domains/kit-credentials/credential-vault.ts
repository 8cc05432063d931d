import { sql, type Kysely } from 'kysely';
import { createCredentialSealer, type CredentialSealer } from '../../../kit-runtime/index.ts';
import type { Database } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { addCredentialKey, loadCredentialKeyRing } from './credential-key-ring.ts';

/** The worker's side of credentials: the only place a secret is ever opened. */
export interface CredentialVault {
  /** The active credential of that type for the project and kit, opened — or null when none opens. */
  /**
   * The newest active credential of that type for the organization's project and kit that opens;
   * null when there is none, CredentialUnopenableError when there are some and none opens.
   */
  openForExecution(target: { tenantId: string; organizationId: string; projectId: string; kitId: string; credentialId: string }): Promise<Record<string, unknown> | null>;
  /** Adds a key and re-seals every stored credential under it; old keys stay until nothing uses them. */
  rotate(): Promise<{ keyId: string; resealed: number }>;
}

/**
 * Rotations take turns: each retires every key but the one it added, so two at once (a rotation
 * requested while another runs gets its own job) would retire both keys and leave none to seal with.
 */
const ROTATION_LOCK_KEY = 7_305_221_911;

export class CredentialUnopenableError extends Error {
  override name = 'CredentialUnopenableError';
}

export function createCredentialVault(owner: Kysely<Database>, serverSecret: string, log: Logger): CredentialVault {
  let loaded: Promise<{ sealer: CredentialSealer; keyIds: Set<string> }> | undefined;
  const keyRing = () => {
    if (loaded) return loaded;
    const loading = loadCredentialKeyRing(owner, serverSecret).then(async (ring) => ({
      sealer: await createCredentialSealer(ring),
      keyIds: new Set(ring.keys.map((key) => key.keyId)),
    }));
    loaded = loading;
    // A load that failed (a lost connection, say) is not kept: the next run loads again.
    loading.catch(() => {
      if (loaded === loading) loaded = undefined;
    });
    return loading;
  };

  return {
    async openForExecution({ tenantId, organizationId, projectId, kitId, credentialId }) {
      const rows = await owner
        .selectFrom('kit_credentials')
        .select(['id', 'key_id', 'sealed'])
        .where('tenant_id', '=', tenantId)
        .where('organization_id', '=', organizationId)
        .where('project_id', '=', projectId)
        .where('kit_id', '=', kitId)
        .where('credential_type', '=', credentialId)
        .where('status', '=', 'active')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      if (rows.length === 0) return null;
      // A key added by another process after this one loaded the ring: reload once.
      const { keyIds } = await keyRing();
      if (rows.some((row) => !keyIds.has(row.key_id))) loaded = undefined;
      const { sealer } = await keyRing();
      // The newest that opens; one that does not (sealed to another key, moved or tampered with)
      // is marked invalid and never used, and does not hide an older one that works.
      for (const row of rows) {
        let secret: Record<string, unknown>;
        try {
          secret = sealer.open({ keyId: row.key_id, ciphertext: row.sealed }, { tenantId, credentialId: row.id });
        } catch (error) {
          log.warn({ credentialRowId: row.id, reason: (error as Error).message }, 'a stored credential failed to open');
          await owner.updateTable('kit_credentials').set({ last_checked_at: new Date(), last_check_status: 'failed', status: 'invalid' }).where('id', '=', row.id).execute();
          continue;
        }
        // Outside the try: a database that fails to record the check is the server's trouble, not
        // the credential's; it propagates (the run is tried again) and the row stays active.
        await owner.updateTable('kit_credentials').set({ last_checked_at: new Date(), last_check_status: 'succeeded' }).where('id', '=', row.id).execute();
        return secret;
      }
      throw new CredentialUnopenableError(`none of the ${rows.length} stored credential(s) opened; each is now marked invalid`);
    },

    async rotate() {
      let resealed = 0;
      // The key is added in the rotation's own transaction: a failed rotation leaves no key behind.
      const keyId = await owner.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${ROTATION_LOCK_KEY})`.execute(trx);
        const keyId = await addCredentialKey(trx, serverSecret);
        // Re-seal under the key just added, whatever the created_at order of keys added meanwhile.
        const sealer = await createCredentialSealer({ ...(await loadCredentialKeyRing(trx, serverSecret)), currentKeyId: keyId });
        const rows = await trx.selectFrom('kit_credentials').select(['id', 'tenant_id', 'key_id', 'sealed']).forUpdate().execute();
        for (const row of rows) {
          const binding = { tenantId: row.tenant_id, credentialId: row.id };
          try {
            const next = sealer.rotate({ keyId: row.key_id, ciphertext: row.sealed }, binding);
            await trx.updateTable('kit_credentials').set({ key_id: next.keyId, sealed: next.ciphertext }).where('id', '=', row.id).execute();
            resealed += 1;
          } catch {
            // Already unusable (it does not belong to its row): it stays sealed as it is, marked invalid.
            await trx.updateTable('kit_credentials').set({ status: 'invalid', last_check_status: 'failed', last_checked_at: new Date() }).where('id', '=', row.id).execute();
          }
        }
        // New seals use the new key; older keys stay in the ring for anything still under them.
        await trx.updateTable('credential_keys').set({ retired_at: new Date() }).where('key_id', '!=', keyId).where('retired_at', 'is', null).execute();
        return keyId;
      });
      loaded = undefined;
      return { keyId, resealed };
    },
  };
}
