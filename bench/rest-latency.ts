// Benchmark: GET /api/projects/{id} through the full stack (auth, tenancy, envelope, rate limit)
// against a bare express + pg handler doing the same primary-key query, run side by side in one
// run. Reports ratios, never absolute timings: mean latency at 1 connection (target ≤ 1.5× the bare
// handler) and throughput at 50 connections (target ≥ 0.55×). Beside the ratios, each load run
// reports the CPU the service process and its PostgreSQL spent per request (Linux), which shows
// where the difference goes.
//
//   node --no-node-snapshot bench/rest-latency.ts [--seconds 5] [--rounds 3]
import { fork } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import autocannon from 'autocannon';
import { median } from './measure.ts';
import { processTreeCpuMs } from './process-tree-cpu.ts';

interface Target {
  url: string;
  headers: Record<string, string>;
}

const option = (name: string, fallback: number) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) || fallback : fallback);
const seconds = option('--seconds', 5);
const roundCount = option('--rounds', 3);
const servers = fork(new URL('./rest-latency.servers.ts', import.meta.url), { execArgv: ['--no-node-snapshot'], stdio: 'inherit' });
const targets = await new Promise<{ full: Target; bare: Target }>((resolve) => servers.once('message', resolve as never));

type Measured = {
  meanLatencyMs: number;
  requestsPerSecond: number;
  connections: number;
  /** CPU per request, in microseconds, of the service process and of its PostgreSQL (Linux only). */
  cpuMicrosPerRequest?: { service: number; postgres: number };
};

async function load(target: Target, connections: number, duration: number): Promise<Measured> {
  const cpuBefore = processTreeCpuMs(servers.pid!);
  const result = await autocannon({ url: target.url, headers: target.headers, connections, duration, pipelining: 1 });
  const cpuAfter = processTreeCpuMs(servers.pid!);
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.url}: ${result.non2xx} non-2xx and ${result.errors} errors`);
  const perRequest = (before: number, after: number) => Math.round(((after - before) * 1000) / result.requests.total);
  return {
    // autocannon's latency histogram counts whole milliseconds, too coarse for sub-millisecond
    // answers; with one connection the loop is closed, so mean latency is exactly 1 / throughput.
    meanLatencyMs: Number((1000 / result.requests.average).toFixed(4)),
    requestsPerSecond: result.requests.average,
    connections,
    ...(cpuBefore && cpuAfter
      ? { cpuMicrosPerRequest: { service: perRequest(cpuBefore.own, cpuAfter.own), postgres: perRequest(cpuBefore.descendants, cpuAfter.descendants) } }
      : {}),
  };
}

// Warm both (JIT, connection pools, plan caches), then measure in rounds, alternating which goes
// first; each round gives a ratio, and the report takes the median, so a noisy moment on a shared
// machine moves one round rather than the verdict.
await load(targets.full, 10, 2);
await load(targets.bare, 10, 2);
const rounds: Array<{ latencyRatio: number; throughputRatio: number; bareLatency: Measured; fullLatency: Measured; bareThroughput: Measured; fullThroughput: Measured }> = [];
for (let round = 0; round < roundCount; round += 1) {
  const pair = async (connections: number) => {
    if (round % 2 === 0) return { bare: await load(targets.bare, connections, seconds), full: await load(targets.full, connections, seconds) };
    const full = await load(targets.full, connections, seconds);
    return { bare: await load(targets.bare, connections, seconds), full };
  };
  const latency = await pair(1);
  const throughput = await pair(50);
  rounds.push({
    latencyRatio: latency.full.meanLatencyMs / latency.bare.meanLatencyMs,
    throughputRatio: throughput.full.requestsPerSecond / throughput.bare.requestsPerSecond,
    bareLatency: latency.bare,
    fullLatency: latency.full,
    bareThroughput: throughput.bare,
    fullThroughput: throughput.full,
  });
}
const latencyRatio = median(rounds.map((r) => r.latencyRatio));
// The round with the median throughput ratio: its ratio, and what one request costs each side at 50 connections.
const medianRound = [...rounds].sort((a, b) => a.throughputRatio - b.throughputRatio)[Math.floor(rounds.length / 2)]!;
const throughputRatio = medianRound.throughputRatio;
const report = {
  benchmark: 'rest-latency',
  seconds,
  rounds: roundCount,
  latencyRatio: Number(latencyRatio.toFixed(3)),
  latencyTarget: '≤ 1.5',
  latencyMet: latencyRatio <= 1.5,
  throughputRatio: Number(throughputRatio.toFixed(3)),
  throughputTarget: '≥ 0.55',
  throughputMet: throughputRatio >= 0.55,
  cpuMicrosPerRequest: { bare: medianRound.bareThroughput.cpuMicrosPerRequest, full: medianRound.fullThroughput.cpuMicrosPerRequest },
  raw: rounds,
};
console.log(JSON.stringify(report, null, 2));
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(new URL('./results/rest-latency.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
servers.send('stop');
await new Promise((resolve) => servers.once('exit', resolve));
process.exitCode = report.latencyMet && report.throughputMet ? 0 : 1;
