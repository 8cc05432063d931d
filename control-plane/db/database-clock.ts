import { sql } from 'kysely';

/**
 * The time rows are stamped with: always the database's clock, never the process's (`new Date()`).
 * Rows get `created_at` from a column default, by the database's clock; a later stamp written from an
 * API node or worker whose clock differs (several nodes, a skewed VM) could read earlier than it, and
 * would disagree with what the database judges by its own clock (invitation expiry, stale heartbeats).
 *
 * Both are `now()`, the start of the current transaction: a row created and changed in one
 * transaction shows one time, and every statement of a transaction agrees on it. The transactions
 * that write these stamps are short (the run of a kit happens between transactions, not in one);
 * a stamp at the end of a long transaction would want `clock_timestamp()` instead.
 */

/**
 * To the millisecond, as the `created_at` defaults stamp (migration 0010) and answers show it: for
 * `updated_at` beside `created_at`, and for revoked, retired and checked times.
 */
export const databaseNow = sql<Date>`date_trunc('milliseconds', now())`;

/**
 * Unrounded, as `worker_heartbeats` and an execution's `started_at` are stamped: for a stamp that
 * must not read before one of those (an execution's `completed_at` after its `started_at`, which
 * rounding down could put a fraction of a millisecond before it).
 */
export const databaseNowExact = sql<Date>`now()`;
