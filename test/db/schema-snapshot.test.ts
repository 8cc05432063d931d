import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { describeSchema } from '../helpers/schema-snapshot.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

const SNAPSHOT = 'migrations/schema.snapshot.txt';

describe('the migrated schema', () => {
  it('matches the committed snapshot (regenerate with `npm run schema:snapshot` and review the diff)', async () => {
    const database = await createTestDatabase();
    const actual = await describeSchema(database.ownerUrl);
    if (process.env.UPDATE_SCHEMA_SNAPSHOT === '1') await writeFile(SNAPSHOT, actual);
    expect(existsSync(SNAPSHOT), `${SNAPSHOT} is missing: run npm run schema:snapshot`).toBe(true);
    expect(actual).toBe(await readFile(SNAPSHOT, 'utf8'));
  });
});
