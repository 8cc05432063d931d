import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import { downloadExportInput, downloadExportOutput } from './exports.schema.ts';
import { downloadExport } from './exports.service.ts';

/** Export packs of a project's specification (seed §4.7). */
export const exportsRouter = router({
  download: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/exports/download',
        tags: ['exports'],
        summary: "A ZIP of the project's specification (and its definition of done, test plan, task graph, runbook, MCP configuration) as JSON or Markdown, by a signed link",
        errorResponses: { 404: 'NOT_FOUND: no such project, or no such specification of it', 409: 'CONFLICT: no completed specification, or a part it does not have' },
      },
    })
    .input(downloadExportInput)
    .output(downloadExportOutput)
    .mutation(({ ctx, input }) => downloadExport(ctx.db, ctx.principal, ctx.downloadLinks, input)),
});
