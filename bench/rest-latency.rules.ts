// The rules floor of rest-latency: the service's request rules that reach the database — the rate
// count, the API-key check, the tenant transaction under row-level security and the project read
// with its membership and assignment check — hand-written on a bare express + pg handler, in the
// fewest round trips they allow and with none of the fixed stack (no tRPC, zod or Kysely at request
// time). Every statement is the service's own, captured once at start: the rate count is what the
// service's request counter sends (rate-limiter-flexible's upsert), the key check and the read are
// what authenticateApiKey and findProject compile to; BEGIN with the tenant is the text it sends.
//
// All of them cross to PostgreSQL in one write (pg's pipeline mode), which the service cannot do:
// the tenant is known only once the key is. Here it is taken from the key's previous check and
// verified by this one, in the same round trip (a key whose answer names another tenant is
// refused), so the first request of a key makes one round trip more. What this costs beside the
// bare handler is what the rules themselves cost, however the service were built.
import express, { type Request } from 'express';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type CompiledQuery } from 'kysely';
import type pg from 'pg';
import { apiKeyPrefix, hashApiKey, hashesMatch } from '../control-plane/auth/api-key-format.ts';
import { authenticateApiKey, type ApiKeyLookup } from '../control-plane/auth/auth.repository.ts';
import type { Database } from '../control-plane/db/database.ts';
import type { StatementBatches } from '../control-plane/db/statement-batches.ts';
import { beginForTenantText } from '../control-plane/db/tenant-transaction.ts';
import { findProject } from '../control-plane/domains/projects/projects.repository.ts';
import { createRequestCounter, rateLimitCallerKey } from '../control-plane/http/rate-limit.ts';
import { benchPool, listenOnLoopback, type LoopbackServer } from './loopback-server.ts';

const RATE_WINDOW_MS = 60_000;
const RATE_LIMIT = 100_000_000;

/** The statement `run` sends through Kysely (compiled only, never sent), its placeholder values as given. */
async function compiledStatement(run: (db: Kysely<Database>) => Promise<unknown>): Promise<CompiledQuery> {
  let compiled: CompiledQuery | undefined;
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => void (compiled = event.query),
  });
  await run(db);
  if (!compiled) throw new Error('nothing compiled a statement');
  return compiled;
}

/** The statement's values, each placeholder (`TENANT` …) replaced by its value. */
function valuesOf(statement: CompiledQuery, values: Record<string, unknown>): unknown[] {
  return statement.parameters.map((value) => (typeof value === 'string' && Object.hasOwn(values, value) ? values[value] : value));
}

/** The service's counting statement (rate-limiter-flexible's upsert), and where its values go (key, points, expiry, now). */
async function rateCountStatement(): Promise<string> {
  let text: string | undefined;
  const recorder = {
    query: async (statement: { text: string; values: unknown[] }) => {
      text = statement.text;
      if (statement.values[0] !== 'general:PROBE' || statement.values[1] !== 1) throw new Error('rate-limiter-flexible orders its values differently now');
      return { rows: [{ points: 1, expire: Date.now() + RATE_WINDOW_MS }] };
    },
  };
  const countRequest = createRequestCounter(recorder as unknown as StatementBatches, { general: RATE_LIMIT, agent: RATE_LIMIT, compilation: RATE_LIMIT, discoveryChat: RATE_LIMIT, perHour: undefined });
  await countRequest({ path: '/projects/PROJECT' } as Request, 'PROBE');
  if (!text) throw new Error('rate-limiter-flexible sent no statement');
  return text;
}

export async function startRulesFloor(appUrl: string): Promise<LoopbackServer> {
  const [keyCheck, read, rateCount] = await Promise.all([
    compiledStatement((db) => authenticateApiKey(db, 'PREFIX', 'HASH')),
    // For a caller bound by their memberships and assignments.
    compiledStatement((db) => findProject(db, { tenantId: 'TENANT', userId: 'USER' }, 'PROJECT')),
    rateCountStatement(),
  ]);
  // The app role, as the service connects: row-level security applies.
  const pool = benchPool({ connectionString: appUrl, max: 10, pipeline: true } as pg.PoolConfig);
  /** Per key (by its hash): the tenant and user its last check named. */
  const principals = new Map<string, { tenantId: string; userId: string }>();

  const app = express();
  app.get('/projects/:projectId', async (req, res) => {
    const key = req.headers['x-api-key'];
    const prefix = typeof key === 'string' ? apiKeyPrefix(key) : undefined;
    if (!prefix) return void res.status(401).json({ error: { code: 'UNAUTHORIZED' } });
    const keyHash = hashApiKey(key as string);
    const client = await pool.connect();
    try {
      const now = Date.now();
      const counted = client.query({ name: 'rate_count', text: rateCount, values: [`general:${rateLimitCallerKey(req)!}`, 1, now + RATE_WINDOW_MS, now] });
      const checked = client.query<ApiKeyLookup>({ name: 'key_check', text: keyCheck.sql, values: valuesOf(keyCheck, { PREFIX: prefix, HASH: keyHash }) });
      let assumed = principals.get(keyHash);
      if (!assumed) {
        const found = (await checked).rows[0];
        if (found) principals.set(keyHash, (assumed = { tenantId: found.tenant_id, userId: found.user_id }));
      }
      const begun = assumed ? client.query(beginForTenantText(assumed.tenantId, true)) : undefined;
      const projects = assumed ? client.query({ name: 'project_read', text: read.sql, values: valuesOf(read, { TENANT: assumed.tenantId, USER: assumed.userId, PROJECT: req.params.projectId }) }) : undefined;
      const [count, check, , project] = await Promise.all([counted, checked, begun, projects]);
      const found = check.rows[0];
      if (!found || found.revoked || !hashesMatch(keyHash, found.key_hash) || found.tenant_id !== assumed?.tenantId || found.user_id !== assumed.userId) {
        principals.delete(keyHash);
        return void res.status(401).json({ error: { code: 'UNAUTHORIZED' } });
      }
      res.setHeader('X-RateLimit-Remaining', String(Math.max(0, RATE_LIMIT - count.rows[0].points)));
      if (!project?.rows[0]) return void res.status(404).json({ error: { code: 'NOT_FOUND' } });
      res.json({ data: project.rows[0] });
    } finally {
      // Read-only: the answer is final before the COMMIT, which follows it, as in the service.
      await client.query('commit').catch(() => {});
      client.release();
    }
  });
  return listenOnLoopback(app, () => pool.end());
}
