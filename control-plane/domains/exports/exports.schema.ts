import { z } from 'zod';
import { exportFormats } from '../../http/download-links.ts';
import { uuidInput } from '../../http/uuid-input.ts';

export const downloadExportInput = z.strictObject({
  projectId: uuidInput(),
  specId: uuidInput().optional().describe("One of the project's completed specifications; its latest when absent"),
  format: z.enum(exportFormats).describe('json: each part as JSON; markdown: as Markdown (mcp.json stays JSON); mcp: JSON with mcp.json and a README.md for a coding assistant'),
  include: z
    .strictObject({
      spec: z.boolean().optional().describe('The specification (true when absent)'),
      dod: z.boolean().optional().describe('The definition of done: each requirement with what shows it done'),
      testPlan: z.boolean().optional().describe('The test cases'),
      taskGraph: z.boolean().optional().describe('The task graph (a specification compiled with includeTaskGraph)'),
      runbook: z.boolean().optional().describe('The release steps (a specification compiled with includeRunbook)'),
      mcpConfig: z.boolean().optional().describe("The tool server's configuration for a coding assistant (always in an mcp pack); it names no key"),
    })
    .optional(),
});

export const downloadExportOutput = z.object({
  downloadUrl: z.string().describe('A signed link, valid until expiresAt, for whoever asked (while they still see the project)'),
  expiresAt: z.iso.datetime(),
  size: z.number().int().describe('Bytes of the ZIP'),
  sha256: z.string(),
  specId: z.uuid(),
  version: z.string().describe("The specification's version"),
  contents: z.array(z.string()).describe('The files of the ZIP, manifest.json first'),
});

export type DownloadExportInput = z.infer<typeof downloadExportInput>;
