import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import { compileSpecificationInput, compileSpecificationOutput, specificationIdInput, specificationOutput } from './specifications.schema.ts';
import { compileProjectSpecification, getSpecification } from './specifications.service.ts';

const tags = ['specification'];

/** Compiled specifications (seed §4.7): compile what a project's flow says, then read the result. */
export const specificationsRouter = router({
  compile: authedProcedure
    .meta({
      successStatus: 202,
      openapi: {
        method: 'POST',
        path: '/specification/compile',
        tags,
        summary: "Compile the project's specification from its flow's answers (queued; GET statusUrl for the result)",
        errorResponses: {
          403: "FORBIDDEN: a customer, or a project with no organization; ORG_NOT_MEMBER: not a member of the project's organization",
          404: 'NOT_FOUND: no such project',
          409: 'CONFLICT: the flow has not started',
        },
      },
    })
    .input(compileSpecificationInput)
    .output(compileSpecificationOutput)
    .mutation(({ ctx, input }) => compileProjectSpecification(ctx.db, ctx.principal, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/specification/{specId}', tags, summary: 'A specification: compiling, completed (with the spec and its validation) or failed', errorResponses: { 404: 'NOT_FOUND: no such specification' } } })
    .input(specificationIdInput)
    .output(specificationOutput)
    .query(({ ctx, input }) => getSpecification(ctx.db, ctx.principal, input.specId)),
});
