// Shared by the benchmarks: repeated timings, reported as medians, and the report file.
import { mkdir, writeFile } from 'node:fs/promises';

export async function medianMs(runs: number, work: () => Promise<unknown> | unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
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
