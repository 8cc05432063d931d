import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { ConfigError } from '../config.ts';
import { APP_ROLE, appRoleAcceptsPassword, appRolePassword } from '../db/app-role.ts';
import type { Database } from '../db/database.ts';
import { keyRingOpensWith } from '../domains/kit-credentials/credential-key-ring.ts';
import type { ServerSecret } from './server-secret.ts';

export interface ClusterSecretCheck {
  owner: Kysely<Database>;
  ownerUrl: string;
  serverSecret: ServerSecret;
  dataDir: string;
  /** This node will give the app role the password its secret derives (no APP_DATABASE_URL, serves the API). */
  setsAppRolePassword: boolean;
}

/**
 * Refuses a SERVER_SECRET other than the one the database was set up with, before this node
 * changes anything: its session tokens, download links and credentials would not work elsewhere,
 * and the app-role password it derives would lock every other API node out of the database.
 * Two records of the cluster's secret exist: the credential key ring (sealed with a key derived
 * from it, in this database) and the app role's password (the role is shared by every database
 * of the PostgreSQL server). Must run under the boot lock, so two first starts cannot both win.
 */
export async function assertClusterServerSecret(check: ClusterSecretCheck): Promise<void> {
  const { owner, serverSecret } = check;
  if (!(await credentialKeysOpenWith(owner, serverSecret.secret))) {
    throw mismatch(check, 'the credential keys in this database were sealed with another one');
  }
  if (check.setsAppRolePassword && !(await appRoleAcceptsPassword(owner, check.ownerUrl, appRolePassword(serverSecret.secret)))) {
    throw mismatch(check, `the role ${APP_ROLE} already logs in with a password derived from another one (or set by hand: then give every API node APP_DATABASE_URL)`);
  }
}

function mismatch({ serverSecret, dataDir }: ClusterSecretCheck, evidence: string): ConfigError {
  const which = serverSecret.source === 'environment' ? 'SERVER_SECRET' : `SERVER_SECRET is not set, and the secret kept in ${join(dataDir, 'server-secret')}`;
  return new ConfigError(`${which} is not the one this database was set up with (${evidence}); start this node with the SERVER_SECRET every other node uses. Nothing was changed.`);
}

async function credentialKeysOpenWith(owner: Kysely<Database>, secret: string): Promise<boolean> {
  // Before migrations: the table may not exist yet (first start).
  const { rows } = await sql<{ present: boolean }>`select to_regclass('credential_keys') is not null as present`.execute(owner);
  return !rows[0]?.present || (await keyRingOpensWith(owner, secret));
}
