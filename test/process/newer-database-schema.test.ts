import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { mainProcessesStoppedAfterAll } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

/** An older version started on a database a newer one migrated (an upgrade rolled back). */
const startMainProcess = mainProcessesStoppedAfterAll();

async function query(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

describe('a DATABASE_URL whose database a newer version migrated', () => {
  it('is refused saying so, not as "corrupted migrations", and nothing is applied', async () => {
    const database = await createTestDatabase();
    await query(database.ownerUrl, `insert into kysely_migration (name, timestamp) values ('9999_from_a_newer_version', now())`);
    await query(database.ownerUrl, 'drop schema graphile_worker cascade'); // would be (re)applied by a start that goes ahead
    const main = startMainProcess('api', { DATABASE_URL: database.ownerUrl, DATA_DIR: await scratchDir('newer-schema'), PORT: '0', HOST: '127.0.0.1', SERVER_SECRET: TEST_SERVER_SECRET });
    expect(await main.exit).toBe(1);
    expect(main.output().trim().split('\n')).toEqual([
      'Specwright failed to start: the database was migrated by a newer version of Specwright (it has migrations this version does not know: 9999_from_a_newer_version); start that version or a later one, or restore a backup made before it ran. No migration was applied.',
    ]);
    const { rows } = await query(database.ownerUrl, `select to_regnamespace('graphile_worker') is null as absent`);
    expect(rows).toEqual([{ absent: true }]);
  }, 30_000);
});
