import { sql, type Kysely } from 'kysely';
import { createCredentialSealer } from '../../../kit-runtime/index.ts';
import { databaseNow } from '../../db/database-clock.ts';
import type { Database } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { addCredentialKey, createCredentialKeyMaker, loadOrganizationKeyRing } from './credential-key-ring.ts';

/** The worker's side of credentials: the only place a secret is ever opened. */
export interface CredentialVault {
  /**
   * The newest active credential of that type for the organization's project and kit that opens;
   * null when there is none, CredentialUnopenableError when there are some and none opens. One
   * deleted before its open is recorded is never returned (the rows are read again).
   */
  openForExecution(target: { tenantId: string; organizationId: string; projectId: string; kitId: string; credentialId: string }): Promise<Record<string, unknown> | null>;
  /**
   * Gives every organization with a key or a credential a new key and re-seals its credentials
   * under it; old keys stay, retired, for anything still sealed to them. A credential that does not
   * open (it does not belong to its row) is marked invalid instead, and counted in `invalidated`.
   */
  rotate(): Promise<{ organizations: number; resealed: number; invalidated: number }>;
}

/**
 * Rotating an organization takes turns: two rotations at once (one requested while another runs gets
 * its own job) would each retire the key the other added and leave an organization none to seal
 * with. Issuing an organization's first key or reading its current one (the API, migration 0021)
 * waits for the organization being rotated.
 */
const ROTATION_LOCK_KEY = 7_305_221_911;

export class CredentialUnopenableError extends Error {
  override name = 'CredentialUnopenableError';
}

type OpenTarget = Parameters<CredentialVault['openForExecution']>[0];
/** A row read to be opened was deleted or re-sealed before the open was recorded: read them again. */
const ROW_CHANGED = Symbol('row changed');

export function createCredentialVault(owner: Kysely<Database>, serverSecret: string, log: Logger): CredentialVault {
  const keys = createCredentialKeyMaker(serverSecret);

  /**
   * Retires the organization's current key (a planted one too: what was sealed to it is marked
   * invalid below), adds a new one, and re-seals the organization's credentials under it. Answers
   * how many were re-sealed, and which did not open and were marked invalid.
   */
  async function rotateOrganization(trx: Kysely<Database>, organizationId: string): Promise<{ resealed: number; invalidated: string[] }> {
    await sql`select pg_advisory_xact_lock(${ROTATION_LOCK_KEY})`.execute(trx);
    const rows = await trx.selectFrom('kit_credentials').select(['id', 'tenant_id', 'key_id', 'sealed']).where('organization_id', '=', organizationId).forUpdate().execute();
    // The transaction's start, even after waiting for the lock: the key added next gets it as its created_at.
    await trx.updateTable('credential_keys').set({ retired_at: databaseNow }).where('organization_id', '=', organizationId).where('retired_at', 'is', null).execute();
    await addCredentialKey(trx, keys, organizationId);
    // Its only unretired key is the one just added: it seals, older ones (and the server-wide keys,
    // retired at the end of the rotation) still open.
    const { ring, unopenable } = await loadOrganizationKeyRing(trx, serverSecret, keys, organizationId);
    // Retired now all the same; what was sealed to them is marked invalid below.
    if (unopenable.length > 0) log.error({ organizationId, keyIds: unopenable }, 'credential keys whose rows were altered do not open; what was sealed to them is marked invalid');
    const sealer = await createCredentialSealer(ring!);
    let resealed = 0;
    const invalidated: string[] = [];
    for (const row of rows) {
      const binding = { tenantId: row.tenant_id, credentialId: row.id };
      try {
        const next = sealer.rotate({ keyId: row.key_id, ciphertext: row.sealed }, binding);
        await trx.updateTable('kit_credentials').set({ key_id: next.keyId, sealed: next.ciphertext }).where('id', '=', row.id).execute();
        resealed += 1;
      } catch {
        // Already unusable (it does not belong to its row): it stays sealed as it is, marked invalid.
        await trx.updateTable('kit_credentials').set({ status: 'invalid', last_check_status: 'failed', last_checked_at: databaseNow }).where('id', '=', row.id).execute();
        invalidated.push(row.id);
      }
    }
    // Which ones, so an operator can tell their owners to store them again (ids only: nothing of a secret).
    if (invalidated.length > 0) log.warn({ organizationId, credentialIds: invalidated }, 'credentials that did not open were marked invalid at key rotation; they must be stored again');
    return { resealed, invalidated };
  }

  /**
   * The newest active credential of the type that opens, as `openForExecution`; ROW_CHANGED when a
   * row it read was deleted or re-sealed before it was recorded as checked or marked invalid.
   */
  async function openNewest({ tenantId, organizationId, projectId, kitId, credentialId }: OpenTarget): Promise<Record<string, unknown> | null | typeof ROW_CHANGED> {
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
    // The organization's keys only: a value sealed to another organization's key does not open here.
    const { ring, untrusted, unopenable } = await loadOrganizationKeyRing(owner, serverSecret, keys, organizationId);
    if (untrusted.length > 0) log.error({ organizationId, keyIds: untrusted }, 'credential keys not made by the service (their tags do not check out) were left out');
    if (unopenable.length > 0) {
      log.error({ organizationId, keyIds: unopenable }, 'credential keys whose private key does not open with SERVER_SECRET, or does not match their public key (their rows were altered), were left out');
    }
    // No key opens (every one damaged): nothing sealed to them opens, as with a key left out.
    const sealer = ring ? await createCredentialSealer(ring) : undefined;
    // The newest that opens; one that does not (sealed to another key, moved or tampered with)
    // is marked invalid and never used, and does not hide an older one that works.
    for (const row of rows) {
      let secret: Record<string, unknown>;
      try {
        if (!sealer) throw new Error('sealed with a key that is not in the key ring');
        secret = sealer.open({ keyId: row.key_id, ciphertext: row.sealed }, { tenantId, credentialId: row.id });
      } catch (error) {
        // Only the value that failed: one a rotation re-sealed meanwhile (its old key retired since
        // it was read) is read again, not blamed.
        const marked = await owner
          .updateTable('kit_credentials')
          .set({ last_checked_at: databaseNow, last_check_status: 'failed', status: 'invalid' })
          .where('id', '=', row.id)
          .where('key_id', '=', row.key_id)
          .where('sealed', '=', row.sealed)
          .executeTakeFirst();
        if (Number(marked.numUpdatedRows) === 0) return ROW_CHANGED;
        log.warn({ credentialRowId: row.id, reason: (error as Error).message }, 'a stored credential failed to open');
        continue;
      }
      // Outside the try: a database that fails to record the check is the server's trouble, not
      // the credential's; it propagates (the run is tried again) and the row stays active. A row
      // deleted (or marked invalid) since it was read is not handed over: its delete was answered.
      const recorded = await owner
        .updateTable('kit_credentials')
        .set({ last_checked_at: databaseNow, last_check_status: 'succeeded' })
        .where('id', '=', row.id)
        .where('status', '=', 'active')
        .executeTakeFirst();
      if (Number(recorded.numUpdatedRows) === 0) return ROW_CHANGED;
      return secret;
    }
    throw new CredentialUnopenableError(`none of the ${rows.length} stored credential(s) opened; each is now marked invalid`);
  }

  return {
    async openForExecution(target) {
      // Again from the start when a row it read changed meanwhile (deleted, or re-sealed by a
      // rotation): each pass follows a change another transaction committed.
      for (;;) {
        const opened = await openNewest(target);
        if (opened !== ROW_CHANGED) return opened;
      }
    },

    async rotate() {
      // Which organizations to rotate: those with a current key or a credential when it starts (one
      // that gets its first key meanwhile has a fresh one already).
      const { rows: organizations } = await sql<{ organization_id: string }>`
        select organization_id from credential_keys where organization_id is not null and retired_at is null
        union select organization_id from kit_credentials
        order by organization_id
      `.execute(owner);
      let resealed = 0;
      let invalidated = 0;
      // One transaction per organization: its credentials are locked, and other organizations' keys
      // wait, only while its own few are re-sealed, not for the whole rotation. A rotation that
      // fails part-way leaves each organization either as it was or rotated; its job runs again.
      for (const { organization_id: organizationId } of organizations) {
        const rotated = await owner.transaction().execute((trx) => rotateOrganization(trx, organizationId));
        resealed += rotated.resealed;
        invalidated += rotated.invalidated.length;
      }
      // The server-wide keys of before seal nothing now; what they sealed is under its
      // organization's key. Retired last, once every organization's credentials have moved.
      await owner.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${ROTATION_LOCK_KEY})`.execute(trx);
        await trx.updateTable('credential_keys').set({ retired_at: databaseNow }).where('organization_id', 'is', null).where('retired_at', 'is', null).execute();
      });
      return { organizations: organizations.length, resealed, invalidated };
    },
  };
}
