// Child process of rest-latency.ts: the full service, a bare express + pg handler, the framework
// floor (rest-latency.floor.ts) and the rules floor (rest-latency.rules.ts), side by side on one
// embedded PostgreSQL, so all answer from the same database on the same machine.
//
// Whatever ends the run — the parent's 'stop', the parent exiting or failing (the IPC channel
// closes), or a failure here while starting — stops everything this process started, the embedded
// PostgreSQL (in its own process group) included, and removes the data directory.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { loadConfig } from '../control-plane/config.ts';
import { startService } from '../control-plane/service.ts';
import { benchPool, listenOnLoopback } from './loopback-server.ts';
import { startFrameworkFloor } from './rest-latency.floor.ts';
import { startRulesFloor } from './rest-latency.rules.ts';

const dataDir = await mkdtemp(join(tmpdir(), 'specwright-bench-'));
const closers: Array<() => Promise<unknown>> = [];
let stopping = false;
async function stopAll(exitCode: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    for (const close of closers.reverse()) await close().catch((error: unknown) => console.error(error));
    await rm(dataDir, { recursive: true, force: true });
  }
  process.exit(exitCode);
}
process.on('message', () => void stopAll(0));
process.on('disconnect', () => void stopAll(0));

try {
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
  closers.push(() => service.stop());
  const { apiKey, tenantId } = service.firstRun.bootstrap!;
  const created = await fetch(`${service.url}/api/projects`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify({ name: 'Benchmark project', description: 'read over and over' }),
  });
  if (created.status !== 201) throw new Error(`creating the benchmark project answered ${created.status}: ${await created.text()}`);
  const projectId = ((await created.json()) as { data: { id: string } }).data.id;

  // The baseline: the same primary-key read, nothing else (no auth, tenancy, envelope or limits).
  const ownerUrl = service.owner.pool.options.connectionString!;
  const pool = benchPool({ connectionString: ownerUrl, max: 10 });
  const bareApp = express();
  bareApp.get('/projects/:id', async (req, res) => {
    const { rows } = await pool.query('select * from projects where id = $1', [req.params.id]);
    if (rows.length === 0) return void res.status(404).json({ error: 'not found' });
    res.json(rows[0]);
  });
  const bare = await listenOnLoopback(bareApp, () => pool.end());
  closers.push(() => bare.stop());
  const floor = await startFrameworkFloor(ownerUrl, tenantId);
  closers.push(() => floor.stop());
  const rules = await startRulesFloor(service.app!.pool.options.connectionString!);
  closers.push(() => rules.stop());

  process.send!({
    full: { url: `${service.url}/api/projects/${projectId}`, headers: { 'x-api-key': apiKey } },
    bare: { url: `http://127.0.0.1:${bare.port}/projects/${projectId}`, headers: {} },
    floor: { url: `http://127.0.0.1:${floor.port}/projects/${projectId}`, headers: {} },
    rules: { url: `http://127.0.0.1:${rules.port}/projects/${projectId}`, headers: { 'x-api-key': apiKey } },
  });
} catch (error) {
  console.error('rest-latency: the servers could not start:', error);
  await stopAll(1);
}
