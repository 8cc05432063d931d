import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { inject } from 'vitest';
import { withDatabase } from './database-url.ts';
import { TEMPLATE_DATABASE } from './test-constants.ts';

export interface TestDatabase {
  name: string;
  ownerUrl: string;
  appUrl: string;
}


/** A fresh database cloned from the migrated template: this test file's own. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const { ownerUrl, appUrl } = inject('postgres');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await client.query(`create database "${name}" template "${TEMPLATE_DATABASE}"`);
        break;
      } catch (error) {
        // Another file cloning the template at this instant holds it briefly (55006 object_in_use).
        if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error;
        await sleep(50 + Math.random() * 100);
      }
    }
  } finally {
    await client.end();
  }
  return { name, ownerUrl: withDatabase(ownerUrl, name), appUrl: withDatabase(appUrl, name) };
}
