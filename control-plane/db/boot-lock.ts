import type pg from 'pg';

/** One number for "a process is migrating or bootstrapping this database". */
const BOOT_LOCK_KEY = 7_305_221_901;

/** Serialises boot work (migrations, first run) across processes starting at the same time. */
export async function withBootLock<T>(pool: pg.Pool, work: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [BOOT_LOCK_KEY]);
    try {
      return await work();
    } finally {
      await client.query('select pg_advisory_unlock($1)', [BOOT_LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}
