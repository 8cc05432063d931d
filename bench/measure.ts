// Shared by the benchmarks: repeated timings, reported as medians, and the report file.
import { mkdir, writeFile } from 'node:fs/promises';

/** The middle value (the upper of the two middle ones for an even count). */
export const median = (samples: number[]) => [...samples].sort((x, y) => x - y)[Math.floor(samples.length / 2)]!;

export async function medianMs(runs: number, work: () => Promise<unknown> | unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

/**
 * Times two pieces of work alternately (A, B, A, B …) after a warm-up, so drift in machine load
 * and JIT state falls on both alike; returns the median of each.
 */
export async function interleavedMediansMs(runs: number, a: () => Promise<unknown> | unknown, b: () => Promise<unknown> | unknown, warmup = 20) {
  for (let i = 0; i < warmup; i += 1) {
    await a();
    await b();
  }
  const samplesA: number[] = [];
  const samplesB: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    let started = performance.now();
    await a();
    samplesA.push(performance.now() - started);
    started = performance.now();
    await b();
    samplesB.push(performance.now() - started);
  }
  return { a: median(samplesA), b: median(samplesB) };
}

export interface RatioCheck {
  name: string;
  ratio: number;
  target: string;
  met: boolean;
}

export const atMost = (name: string, ratio: number, limit: number): RatioCheck => ({ name, ratio: Number(ratio.toFixed(3)), target: `≤ ${limit}`, met: ratio <= limit });
export const atLeast = (name: string, ratio: number, limit: number): RatioCheck => ({ name, ratio: Number(ratio.toFixed(3)), target: `≥ ${limit}`, met: ratio >= limit });

/** Prints the report, writes bench/results/<name>.json, and sets the exit code from the targets. */
export async function report(name: string, checks: RatioCheck[], raw: Record<string, unknown>): Promise<void> {
  const result = { benchmark: name, checks, raw };
  console.log(JSON.stringify(result, null, 2));
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(new URL(`./results/${name}.json`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
  process.exitCode = checks.every((check) => check.met) ? 0 : 1;
}
