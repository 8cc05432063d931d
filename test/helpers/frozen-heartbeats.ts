import { ownerQuery } from './owner-sql.ts';

/**
 * What a database outage leaves behind: every worker heartbeat older than any stale period, and
 * (until `thawHeartbeats`) later beats not landing — an update keeps the old time; a new worker's
 * first beat, an insert, still lands.
 */
export async function freezeHeartbeatsStale(ownerUrl: string): Promise<void> {
  await ownerQuery(
    ownerUrl,
    `begin;
     update worker_heartbeats set last_seen_at = now() - interval '1 minute';
     create function test_heartbeats_frozen() returns trigger language plpgsql as $$ begin new.last_seen_at := old.last_seen_at; return new; end $$;
     create trigger test_heartbeats_frozen before update on worker_heartbeats for each row execute function test_heartbeats_frozen();
     commit;`,
  );
}

/** Lets beats land again (harmless when nothing is frozen). */
export async function thawHeartbeats(ownerUrl: string): Promise<void> {
  await ownerQuery(ownerUrl, 'drop trigger if exists test_heartbeats_frozen on worker_heartbeats; drop function if exists test_heartbeats_frozen()');
}
