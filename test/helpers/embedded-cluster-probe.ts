// Run as a child process by test/process/embedded-cluster.test.ts: starts the embedded cluster in
// the directory argv[2], prints what the cluster is made of as one JSON line, stops it, and leaves
// with exit code 3 (set, not forced: nothing may override it on the way out).
import pg from 'pg';
import { startEmbeddedPostgres } from '../../control-plane/db/embedded-postgres.ts';

const cluster = await startEmbeddedPostgres(process.argv[2]!);
const client = new pg.Client(cluster.ownerUrl);
await client.connect();
try {
  const { rows } = await client.query<{ encoding: string; lowered: string }>(`select pg_encoding_to_char(encoding) as encoding, lower('ÉCOLE') as lowered from pg_database where datname = current_database()`);
  console.log(JSON.stringify(rows[0]));
} finally {
  await client.end();
  await cluster.stop();
}
process.exitCode = 3;
