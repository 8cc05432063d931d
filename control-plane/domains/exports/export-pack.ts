import { buildOutputBundle, type OutputBundle } from '../../../kit-runtime/bundle.ts';
import type { ExportFormat } from '../../http/download-links.ts';
import type { CompiledSpec } from '../specifications/specifications.schema.ts';
import { definitionOfDone, exportParts, mcpConfig, partData, type ExportPart } from './export-contents.ts';
import { markdownOf } from './export-markdown.ts';

const fileNames: Record<ExportPart, { json: string; markdown: string }> = {
  spec: { json: 'spec.json', markdown: 'SPEC.md' },
  dod: { json: 'definition-of-done.json', markdown: 'DEFINITION-OF-DONE.md' },
  testPlan: { json: 'test-plan.json', markdown: 'TEST-PLAN.md' },
  taskGraph: { json: 'task-graph.json', markdown: 'TASK-GRAPH.md' },
  runbook: { json: 'runbook.json', markdown: 'RUNBOOK.md' },
  mcpConfig: { json: 'mcp.json', markdown: 'mcp.json' },
};

export interface ExportSubject {
  projectId: string;
  specificationId: string;
  version: number;
  compiledAt: Date;
}

const json = (data: unknown) => `${JSON.stringify(data, null, 2)}\n`;

function fileOf(part: ExportPart, format: ExportFormat, spec: CompiledSpec): { filename: string; content: string } {
  if (format !== 'markdown' || part === 'mcpConfig') return { filename: fileNames[part].json, content: json(partData(part, spec)) };
  const content =
    part === 'spec' ? markdownOf.spec(spec)
    : part === 'dod' ? markdownOf.dod(definitionOfDone(spec))
    : part === 'testPlan' ? markdownOf.testPlan({ testCases: spec.testCases })
    : part === 'taskGraph' ? markdownOf.taskGraph(spec.taskGraph!)
    : markdownOf.runbook(spec.runbook!);
  return { filename: fileNames[part].markdown, content };
}

/** What an assistant reads first in an `mcp` pack: which project and specification it holds, and how to reach the service. */
function assistantGuide(subject: ExportSubject, files: string[]): string {
  return [
    '# Specwright export for a coding assistant',
    '',
    `Project ${subject.projectId}, specification ${subject.specificationId} (version ${subject.version}).`,
    '',
    `Files: ${files.join(', ')}.`,
    '',
    'mcp.json starts the Specwright tool server (fill in the service URL and an API key): get_specification',
    `with specId ${subject.specificationId} reads this specification, list_tasks with projectId ${subject.projectId}`,
    "the project's tasks, and execute_kit turns the specification into files.",
    '',
  ].join('\n');
}

/**
 * The ZIP of an export pack: the parts asked for, as JSON or Markdown, with `manifest.json` listing
 * each file's size and sha256. An `mcp` pack is JSON, always holds mcp.json, and adds README.md for
 * the assistant. The same specification and choice always give the same bytes (entries are dated
 * by the bundle's fixed date), so a link can build its pack again instead of storing it.
 */
export async function buildExportPack(spec: CompiledSpec, subject: ExportSubject, format: ExportFormat, parts: readonly ExportPart[]): Promise<OutputBundle> {
  const chosen = exportParts.filter((part) => parts.includes(part) || (format === 'mcp' && part === 'mcpConfig'));
  const files = chosen.map((part) => fileOf(part, format, spec));
  if (format === 'mcp') files.push({ filename: 'README.md', content: assistantGuide(subject, files.map((file) => file.filename)) });
  return buildOutputBundle(
    files.map((file) => ({ ...file, status: 'valid' as const })),
    {
      createdAt: subject.compiledAt,
      describedAs: { format: 'specwright-export/1', exportFormat: format, projectId: subject.projectId, specificationId: subject.specificationId, specificationVersion: String(subject.version) },
    },
  );
}

export { mcpConfig };
