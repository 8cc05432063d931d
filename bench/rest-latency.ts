// Benchmark: GET /api/projects/{id} through the full stack (auth, tenancy, envelope, rate limit)
// against a bare express + pg handler doing the same primary-key query, run side by side in one
// run. Reports ratios, never absolute timings: mean latency at 1 connection (target ≤ 1.5× the bare
// handler) and throughput at 50 connections (target ≥ 0.55×). Beside the ratios, each load run
// reports the CPU the service process and its PostgreSQL spent per request (Linux), which shows
// where the difference goes.
//
// Two more servers in the same run bound the full stack from below, each from one side:
// - the framework floor (rest-latency.floor.ts) answers the same read through the fixed stack alone
//   (express, tRPC projected by trpc-to-openapi, zod, Kysely) without any of the service's request
//   rules: what any service built on that stack can reach;
// - the rules floor (rest-latency.rules.ts) applies the service's database rules (rate count, key
//   check, tenant transaction, access check) by hand on express + pg, all in one round trip, without
//   the stack: what any service keeping those rules can reach.
//
//   node --no-node-snapshot bench/rest-latency.ts [--seconds 5] [--rounds 3]
import { fork } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import autocannon from 'autocannon';
import { median } from './measure.ts';
import { processTreeCpuMs } from './process-tree-cpu.ts';

const order = ['bare', 'full', 'floor', 'rules'] as const;
type Server = (typeof order)[number];

interface Target {
  url: string;
  headers: Record<string, string>;
}

const option = (name: string, fallback: number) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) || fallback : fallback);
const seconds = option('--seconds', 5);
const roundCount = option('--rounds', 3);
const servers = fork(new URL('./rest-latency.servers.ts', import.meta.url), { execArgv: ['--no-node-snapshot'], stdio: 'inherit' });
const targets = await new Promise<Record<Server, Target>>((resolve, reject) => {
  servers.once('message', resolve as never);
  servers.once('exit', (code) => reject(new Error(`the servers exited (code ${code}) before they were ready`)));
});

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

// Warm all four (JIT, connection pools, plan caches), then measure in rounds, rotating which goes
// first; each round gives ratios, and the report takes the median, so a noisy moment on a shared
// machine moves one round rather than the verdict.
for (const server of order) await load(targets[server], 10, 2);
type Round = Record<'latency' | 'throughput', Record<Server, Measured>>;
const rounds: Round[] = [];
for (let round = 0; round < roundCount; round += 1) {
  const rotated = [...order.slice(round % order.length), ...order.slice(0, round % order.length)];
  const measureAll = async (connections: number) => {
    const measured = {} as Record<Server, Measured>;
    for (const server of rotated) measured[server] = await load(targets[server], connections, seconds);
    return measured;
  };
  rounds.push({ latency: await measureAll(1), throughput: await measureAll(50) });
}
/** A server's ratios to the bare handler in one round: mean latency at 1 connection, throughput at 50. */
const latencyRatioOf = (round: Round, server: Server) => round.latency[server].meanLatencyMs / round.latency.bare.meanLatencyMs;
const throughputRatioOf = (round: Round, server: Server) => round.throughput[server].requestsPerSecond / round.throughput.bare.requestsPerSecond;
const medianRatios = (server: Server) => ({
  latencyRatio: Number(median(rounds.map((r) => latencyRatioOf(r, server))).toFixed(3)),
  throughputRatio: Number(median(rounds.map((r) => throughputRatioOf(r, server))).toFixed(3)),
});

const latencyRatio = median(rounds.map((r) => latencyRatioOf(r, 'full')));
// The round with the median throughput ratio: its ratio, and what one request costs each side at 50 connections.
const medianRound = [...rounds].sort((a, b) => throughputRatioOf(a, 'full') - throughputRatioOf(b, 'full'))[Math.floor(rounds.length / 2)]!;
const throughputRatio = throughputRatioOf(medianRound, 'full');
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
  frameworkFloor: medianRatios('floor'),
  rulesFloor: medianRatios('rules'),
  cpuMicrosPerRequest: Object.fromEntries(order.map((server) => [server, medianRound.throughput[server].cpuMicrosPerRequest])),
  raw: rounds,
};
console.log(JSON.stringify(report, null, 2));
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(new URL('./results/rest-latency.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
servers.send('stop');
await new Promise((resolve) => servers.once('exit', resolve));
process.exitCode = report.latencyMet && report.throughputMet ? 0 : 1;
