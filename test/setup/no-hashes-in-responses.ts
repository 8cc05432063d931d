import { afterAll, expect } from 'vitest';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { databasesInUse, recordedResponses } from '../helpers/response-log.ts';

/**
 * Runs after every test file: no response body the file received may contain a stored password
 * hash, API-key hash or invitation-token hash of any database the file used.
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
  const leaks = recordedResponses.filter((response) => [...hashes].some((hash) => response.text.includes(hash)));
  expect(leaks.map((leak) => leak.path)).toEqual([]);
});
