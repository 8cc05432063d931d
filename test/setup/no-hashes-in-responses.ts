import { afterAll, expect } from 'vitest';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { databasesInUse, recordedResponses } from '../helpers/response-log.ts';
import { recordServerResponses } from '../helpers/server-response-recorder.ts';

// Every body a server of this test file writes, whichever client asked (helpers, typed client, fetch).
recordServerResponses((response) => recordedResponses.push(response));

/**
 * Runs after every test file: no response body the file's servers wrote or its HTTP helpers
 * received (a service started as a process of its own) may contain a stored password hash,
 * API-key hash or invitation-token hash of any database the file used, nor any argon2 hash at all
 * (one since replaced, or of a row since deleted, is no longer in the database to be matched).
 */
afterAll(async () => {
  if (recordedResponses.length === 0 || databasesInUse.size === 0) return;
  const hashes = new Set<string>();
  for (const url of databasesInUse) {
    const rows = await ownerQuery<{ hash: string }>(
      url,
      `select key_hash as hash from api_keys
       union all select password_hash from users where password_hash is not null
       union all select token_hash from customer_invitations`,
    );
    for (const row of rows) hashes.add(row.hash);
  }
  const leaks = recordedResponses.filter((response) => response.text.includes('$argon2id$') || [...hashes].some((hash) => response.text.includes(hash)));
  expect(leaks.map((leak) => leak.path)).toEqual([]);
});
