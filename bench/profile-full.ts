// Not a benchmark: starts the full service as rest-latency.servers.ts does and loads
// GET /api/projects/{id} with autocannon (in a process of its own, so the profile holds the service
// alone), for a CPU profile of the request path and its CPU per request:
//   PROFILE_OUT=/tmp/full.cpuprofile node --no-node-snapshot bench/profile-full.ts [--seconds 10] [--connections 50] [--print]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadConfig } from '../control-plane/config.ts';
import { startService } from '../control-plane/service.ts';

const option = (name: string, fallback: number) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) || fallback : fallback);
const dataDir = await mkdtemp(join(tmpdir(), 'specwright-profile-'));
const service = await startService(
  loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: process.env.PROFILE_LOG_LEVEL ?? 'silent', RATE_LIMIT_GENERAL_PER_MINUTE: '100000000' }),
  { mode: 'api' },
);
try {
  const { apiKey } = service.firstRun.bootstrap!;
  const created = await fetch(`${service.url}/api/projects`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify({ name: 'Benchmark project', description: 'read over and over' }),
  });
  const projectId = ((await created.json()) as { data: { id: string } }).data.id;
  const url = `${service.url}/api/projects/${projectId}`;
  const headers = { 'x-api-key': apiKey };
  if (process.argv.includes('--print')) {
    const answer = await fetch(url, { headers });
    console.log(answer.status, [...answer.headers].map(([k, v]) => `${k}: ${v}`).join('\n'), '\n', await answer.text());
  }
  // autocannon in its own process, so the profile holds the service alone.
  const load = async (connections: number, seconds: number) => {
    const { execFile } = await import('node:child_process');
    const out = await new Promise<string>((resolve, reject) =>
      execFile('node_modules/.bin/autocannon', ['--json', '-c', String(connections), '-d', String(seconds), '-H', `x-api-key=${apiKey}`, url], { maxBuffer: 1 << 24 }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
    );
    return JSON.parse(out) as { requests: { average: number; total: number }; non2xx: number };
  };
  await load(10, 3);
  const session = new Session();
  session.connect();
  const profiling = process.env.PROFILE_OUT;
  if (profiling) {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const started = process.cpuUsage();
  const result = await load(option('--connections', 50), option('--seconds', 10));
  const cpu = process.cpuUsage(started);
  if (profiling) writeFileSync(profiling, JSON.stringify((await session.post('Profiler.stop')).profile));
  console.log(JSON.stringify({ rps: result.requests.average, total: result.requests.total, non2xx: result.non2xx, processCpuMicrosPerRequest: Math.round((cpu.user + cpu.system) / result.requests.total) }));
} finally {
  await service.stop();
  await rm(dataDir, { recursive: true, force: true });
}
