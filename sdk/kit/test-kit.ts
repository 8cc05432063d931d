/**
 * `specwright kit test`: loads a kit directory, runs it once per example input
 * (`examples/*.json`) in the server's sandbox, and reports every output's validation result. Runs
 * are dry runs — APPLY is skipped — so testing a platform kit never touches its target.
 */
import type { KitPackageProblem, KitExecutionStatus, KitOutputStatus, KitRuntime } from '../../kit-runtime/index.ts';
import { formatProblem, loadKitDirectory, readKitExamples } from './kit-directory.ts';
import { runLoadedKit } from './run-kit.ts';

export type KitExampleRun = {
  example: string;
  file: string;
  status: KitExecutionStatus;
  message: string | null;
  executionTimeMs: number;
  outputs: Array<{ outputId: string; filename: string; status: KitOutputStatus; errors: string[]; warnings: string[] }>;
  verifyWarnings: string[];
};
export type KitTestReport = { ok: boolean; kitRef: string | null; problems: KitPackageProblem[]; runs: KitExampleRun[] };

export async function testKitDirectory(dir: string, options: { kitsDir?: string; runtime?: KitRuntime } = {}): Promise<KitTestReport> {
  const loaded = await loadKitDirectory(dir);
  if (!loaded.ok) return { ok: false, kitRef: null, problems: loaded.problems, runs: [] };
  const { examples, problems } = await readKitExamples(dir);
  if (examples.length === 0 && problems.length === 0) {
    problems.push({ file: 'examples', message: 'no example inputs: add examples/<name>.json holding a run input' });
  }
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
  return { ok, kitRef: loaded.kit.ref, problems, runs };
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
  const failed = report.runs.filter((run) => run.status !== 'completed').length;
  lines.push(
    report.ok
      ? `${report.kitRef}: ${report.runs.length} example${report.runs.length === 1 ? '' : 's'} passed`
      : `${report.kitRef ?? 'kit'}: FAILED (${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}, ${failed} of ${report.runs.length} example runs not completed)`,
  );
  return lines;
}
