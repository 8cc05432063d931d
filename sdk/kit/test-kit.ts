/**
 * `specwright kit test`: loads a kit directory, runs it once per example input
 * (`examples/*.json`) in the server's sandbox, and reports every output's validation result. Runs
 * are dry runs — APPLY is skipped — so testing a platform kit never touches its target.
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FILE, type KitManifest, type KitPackageProblem, type KitExecutionStatus, type KitOutputStatus, type KitRuntime } from '../../kit-runtime/index.ts';
import { displayPath, formatProblem, loadKitDirectory, readKitExamples } from './kit-directory.ts';
import { componentDir, componentsDirFor, runLoadedKit } from './run-kit.ts';

export type KitExampleRun = {
  example: string;
  file: string;
  status: KitExecutionStatus;
  message: string | null;
  executionTimeMs: number;
  outputs: Array<{ outputId: string; filename: string; status: KitOutputStatus; errors: string[]; warnings: string[] }>;
  verifyWarnings: string[];
};
/** `kitRef` is null when kit.json is missing or not a valid manifest; `loaded` is false when the kit does not load (no example runs then). */
export type KitTestReport = { ok: boolean; dir: string; kitRef: string | null; loaded: boolean; problems: KitPackageProblem[]; runs: KitExampleRun[] };

export async function testKitDirectory(dir: string, options: { kitsDir?: string; runtime?: KitRuntime } = {}): Promise<KitTestReport> {
  const loaded = await loadKitDirectory(dir);
  if (!loaded.ok) return { ok: false, dir, kitRef: loaded.kitRef ?? null, loaded: false, problems: loaded.problems, runs: [] };
  const { examples, problems } = await readKitExamples(dir);
  if (examples.length === 0 && problems.length === 0) {
    problems.push({ file: 'examples', message: 'no example inputs: add examples/<name>.json holding a run input' });
  }
  problems.unshift(...(await componentProblems(loaded.manifest, componentsDirFor(dir, options.kitsDir))));
  const runs: KitExampleRun[] = [];
  for (const example of examples) {
    const result = await runLoadedKit(loaded.kit, dir, example.input, { dryRun: true, ...options });
    runs.push({
      example: example.name,
      file: example.file,
      status: result.status,
      message: result.message,
      executionTimeMs: result.executionTimeMs,
      outputs: result.outputs.map((o) => ({ outputId: o.outputId, filename: o.filename, status: o.status, errors: o.validationErrors, warnings: o.validationWarnings })),
      verifyWarnings: result.verifyWarnings,
    });
  }
  const ok = problems.length === 0 && runs.every((run) => run.status === 'completed');
  return { ok, dir, kitRef: loaded.kit.ref, loaded: true, problems, runs };
}

/**
 * A run meets a component whose directory holds a kit that does not load as "kit … was not found";
 * its problems, by their path from here, say what to fix.
 */
async function componentProblems(manifest: KitManifest, kitsDir: string): Promise<KitPackageProblem[]> {
  const problems: KitPackageProblem[] = [];
  for (const kitId of new Set((manifest.components ?? []).map((component) => component.kitId))) {
    const dir = componentDir(kitsDir, kitId);
    // No kit there at all: "not found" says it.
    if (!(await lstat(join(dir, MANIFEST_FILE)).then(() => true, () => false))) continue;
    const component = await loadKitDirectory(dir);
    if (component.ok) continue;
    for (const problem of component.problems) problems.push({ ...problem, file: join(displayPath(dir), problem.file) });
  }
  return problems;
}

/** Human-readable lines: one per example, one per output, one per finding. */
export function formatTestReport(report: KitTestReport): string[] {
  const lines = report.problems.map(formatProblem);
  for (const run of report.runs) {
    lines.push(`${run.file}: ${run.status}${run.message ? ` — ${run.message}` : ''} (${Math.round(run.executionTimeMs)} ms)`);
    for (const output of run.outputs) {
      const mark = output.status === 'valid' ? 'ok  ' : output.status === 'warning' ? 'warn' : 'FAIL';
      lines.push(`  ${mark} ${output.outputId} → ${output.filename || '(no filename)'}: ${output.status}`);
      for (const error of output.errors) lines.push(`       error: ${error}`);
      for (const warning of output.warnings) lines.push(`       warning: ${warning}`);
    }
    for (const warning of run.verifyWarnings) lines.push(`  verify warning: ${warning}`);
  }
  lines.push(report.ok ? `${report.kitRef}: ${plural(report.runs.length, 'example')} passed` : failureSummary(report));
  return lines;
}

/**
 * `acme@0.1.0 (kits/acme): FAILED — 2 problems; the kit does not load, so no example ran`: the kit
 * by id when kit.json says it, always by folder (several kits may be tested in one log), and only
 * the counts that say something.
 */
function failureSummary(report: KitTestReport): string {
  const kit = report.kitRef === null ? report.dir : `${report.kitRef} (${report.dir})`;
  const parts = report.problems.length > 0 ? [plural(report.problems.length, 'problem')] : [];
  if (!report.loaded) parts.push('the kit does not load, so no example ran');
  const failed = report.runs.filter((run) => run.status !== 'completed').length;
  if (failed > 0) parts.push(`${failed} of ${plural(report.runs.length, 'example')} did not complete`);
  return `${kit}: FAILED — ${parts.join('; ')}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
