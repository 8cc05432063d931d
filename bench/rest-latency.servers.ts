// Child process of rest-latency.ts: the full service, a bare express + pg handler and the framework
// floor (rest-latency.floor.ts), side by side on one embedded PostgreSQL, so all answer from the
// same database on the same machine.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import pg from 'pg';
import { loadConfig } from '../control-plane/config.ts';
import { startService } from '../control-plane/service.ts';
import { startFrameworkFloor } from './rest-latency.floor.ts';

const dataDir = await mkdtemp(join(tmpdir(), 'specwright-bench-'));
const service = await startService(
  loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    // The limiter still counts every request (that cost is part of the stack); it must not refuse.
    RATE_LIMIT_GENERAL_PER_MINUTE: '100000000',
  }),
  { mode: 'api' },
);
const { apiKey, tenantId } = service.firstRun.bootstrap!;
const created = await fetch(`${service.url}/api/projects`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
  body: JSON.stringify({ name: 'Benchmark project', description: 'read over and over' }),
});
const projectId = ((await created.json()) as { data: { id: string } }).data.id;

// The baseline: the same primary-key read, nothing else (no auth, tenancy, envelope or limits).
const ownerUrl = service.owner.pool.options.connectionString!;
const pool = new pg.Pool({ connectionString: ownerUrl, max: 10 });
const bare = express();
bare.get('/projects/:id', async (req, res) => {
  const { rows } = await pool.query('select * from projects where id = $1', [req.params.id]);
  if (rows.length === 0) return void res.status(404).json({ error: 'not found' });
  res.json(rows[0]);
});
const bareServer = bare.listen(0, '127.0.0.1');
await new Promise((resolve) => bareServer.once('listening', resolve));
const barePort = (bareServer.address() as { port: number }).port;
const floor = await startFrameworkFloor(ownerUrl, tenantId);

process.send!({
  full: { url: `${service.url}/api/projects/${projectId}`, headers: { 'x-api-key': apiKey } },
  bare: { url: `http://127.0.0.1:${barePort}/projects/${projectId}`, headers: {} },
  floor: { url: `http://127.0.0.1:${floor.port}/projects/${projectId}`, headers: {} },
});
process.on('message', async () => {
  bareServer.close();
  await floor.stop();
  await pool.end();
  await service.stop();
  await rm(dataDir, { recursive: true, force: true });
  process.exit(0);
});
