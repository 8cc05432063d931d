import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import {
  bundleLinkOutput,
  executeKitInput,
  executionCreatedOutput,
  executionDetailOutput,
  executionRefInput,
  listExecutionsInput,
  listExecutionsOutput,
  outputContentOutput,
  outputRefInput,
} from './kit-executions.schema.ts';
import { getBundleLink, getKitExecution, getKitOutput, listKitExecutions, startKitExecution } from './kit-executions.service.ts';

const tags = ['kit executions'];

export const kitExecutionsRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/{orgId}/kits/executions', tags, summary: 'Kit executions of the organization, oldest first' } })
    .input(listExecutionsInput)
    .output(listExecutionsOutput)
    .query(({ ctx, input }) => listKitExecutions(ctx.db, ctx.principal, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/{orgId}/kits/executions/{executionId}', tags, summary: 'An execution with its outputs and validation results' } })
    .input(executionRefInput)
    .output(executionDetailOutput)
    .query(({ ctx, input }) => getKitExecution(ctx.db, ctx.principal, input)),

  output: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/{orgId}/kits/executions/{executionId}/outputs/{outputId}', tags, summary: "One output's content" } })
    .input(outputRefInput)
    .output(outputContentOutput)
    .query(({ ctx, input }) => getKitOutput(ctx.db, ctx.principal, input)),

  bundle: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/{orgId}/kits/executions/{executionId}/bundle', tags, summary: 'A signed, expiring link to the ZIP of the valid outputs', errorResponses: { 409: 'CONFLICT: no bundle to link to (the execution is not finished, its bundle is being built, could not be built or is no longer stored, or it has no valid output)' } } })
    .input(executionRefInput)
    .output(bundleLinkOutput)
    .query(({ ctx, input }) => getBundleLink(ctx.db, ctx.principal, ctx.downloadLinks, input)),

  execute: authedProcedure
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/{orgId}/kits/{kitId}/execute', tags, summary: 'Run a kit against a project; poll the execution for its outcome' } })
    .input(executeKitInput)
    .output(executionCreatedOutput)
    .mutation(({ ctx, input }) => startKitExecution(ctx.db, ctx.principal, input)),
});
