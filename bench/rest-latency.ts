// Benchmark: GET /api/projects/{id} through the full stack (auth, tenancy, envelope, rate limit)
// against a bare express + pg handler doing the same primary-key query, run side by side in one
// run. Reports ratios, never absolute timings: mean latency at 1 connection (target ≤ 1.5× the bare
// handler) and throughput at 50 connections (target ≥ 0.55×).
//
//   node --no-node-snapshot bench/rest-latency.ts [--seconds 10]
import { fork } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import autocannon from 'autocannon';

interface Target {
  url: string;
  headers: Record<string, string>;
}

const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 10;
const servers = fork(new URL('./rest-latency.servers.ts', import.meta.url), { execArgv: ['--no-node-snapshot'], stdio: 'inherit' });
const targets = await new Promise<{ full: Target; bare: Target }>((resolve) => servers.once('message', resolve as never));

async function load(target: Target, connections: number, duration: number) {
  const result = await autocannon({ url: target.url, headers: target.headers, connections, duration, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.url}: ${result.non2xx} non-2xx and ${result.errors} errors`);
  // autocannon's latency histogram counts whole milliseconds, too coarse for sub-millisecond
  // answers; with one connection the loop is closed, so mean latency is exactly 1 / throughput.
  return { meanLatencyMs: Number((1000 / result.requests.average).toFixed(4)), requestsPerSecond: result.requests.average, connections };
}

// Warm both (JIT, connection pools, plan caches), then measure in alternating order.
await load(targets.full, 10, 2);
await load(targets.bare, 10, 2);
const bareLatency = await load(targets.bare, 1, seconds);
const fullLatency = await load(targets.full, 1, seconds);
const fullThroughput = await load(targets.full, 50, seconds);
const bareThroughput = await load(targets.bare, 50, seconds);

const latencyRatio = fullLatency.meanLatencyMs / bareLatency.meanLatencyMs;
const throughputRatio = fullThroughput.requestsPerSecond / bareThroughput.requestsPerSecond;
const report = {
  benchmark: 'rest-latency',
  seconds,
  latencyRatio: Number(latencyRatio.toFixed(3)),
  latencyTarget: '≤ 1.5',
  latencyMet: latencyRatio <= 1.5,
  throughputRatio: Number(throughputRatio.toFixed(3)),
  throughputTarget: '≥ 0.55',
  throughputMet: throughputRatio >= 0.55,
  raw: { bareLatency, fullLatency, bareThroughput, fullThroughput },
};
console.log(JSON.stringify(report, null, 2));
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(new URL('./results/rest-latency.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
servers.send('stop');
await new Promise((resolve) => servers.once('exit', resolve));
process.exitCode = report.latencyMet && report.throughputMet ? 0 : 1;
