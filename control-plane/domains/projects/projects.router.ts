import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import {
  createProjectInput,
  deletedProjectOutput,
  listProjectsInput,
  listProjectsOutput,
  projectDetailOutput,
  projectIdInput,
  updateProjectInput,
} from './projects.schema.ts';
import { createProjectForCaller, deleteProjectForCaller, getProjectForCaller, listProjectsForCaller, updateProjectForCaller } from './projects.service.ts';

const tags = ['projects'];

export const projectsRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/projects', tags, summary: 'Projects the caller can see, oldest first' } })
    .input(listProjectsInput)
    .output(listProjectsOutput)
    .query(({ ctx, input }) => listProjectsForCaller(ctx.db, ctx.principal, input)),

  create: authedProcedure
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/projects', tags, summary: 'Create a project (phase CREATED, status active)', errorResponses: { 404: 'NOT_FOUND: no such organization' } } })
    .input(createProjectInput)
    .output(projectDetailOutput)
    .mutation(({ ctx, input }) => createProjectForCaller(ctx.db, ctx.principal, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/projects/{projectId}', tags, summary: 'A project in detail form' } })
    .input(projectIdInput)
    .output(projectDetailOutput)
    .query(({ ctx, input }) => getProjectForCaller(ctx.db, ctx.principal, input.projectId)),

  update: authedProcedure
    .meta({ openapi: { method: 'PATCH', path: '/projects/{projectId}', tags, summary: 'Change name, description, metadata or status (active|archived); never the phase' } })
    .input(updateProjectInput)
    .output(projectDetailOutput)
    .mutation(({ ctx, input }) => updateProjectForCaller(ctx.db, ctx.principal, input)),

  delete: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/projects/{projectId}', tags, summary: 'Delete a project and everything that belongs to it, in one transaction' } })
    .input(projectIdInput)
    .output(deletedProjectOutput)
    .mutation(({ ctx, input }) => deleteProjectForCaller(ctx.db, ctx.principal, input.projectId)),
});
