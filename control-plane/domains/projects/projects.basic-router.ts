import { z } from 'zod';
import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import {
  basicListProjectsInput,
  basicListProjectsOutput,
  basicProjectIdInput,
  basicProjectInput,
  basicProjectOutput,
  basicProjectPatchInput,
  basicProjectReplaceInput,
} from './projects.basic-schema.ts';
import { createBasicProject, deleteBasicProject, getBasicProject, listBasicProjects, patchBasicProject, replaceBasicProject } from './projects.basic-service.ts';

const tags = ['projects'];
const moves = { 400: 'VALIDATION_ERROR, or PHASE_INVALID: the status asks the flow to move back, or complete before specification', 409: 'CONFLICT: the id is taken, or the project is archived' };

/** Variant A's /projects (served under /api/basic; DESIGN §5.1, §5.2). */
export const basicProjectsRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/projects', tags, summary: 'Projects the caller can see, a page at a time' } })
    .input(basicListProjectsInput)
    .output(basicListProjectsOutput)
    .query(({ ctx, input }) => listBasicProjects(ctx.db, ctx.principal, input)),

  create: authedProcedure
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/projects', tags, summary: 'Create a project (in your organization), at the status given', errorResponses: { ...moves, 403: 'FORBIDDEN: you are no owner, admin or member of an organization, or are a platform admin acting in another tenant' } } })
    .input(basicProjectInput)
    .output(basicProjectOutput)
    .mutation(({ ctx, input }) => createBasicProject(ctx.db, ctx.principal, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/projects/{id}', tags, summary: 'A project' } })
    .input(basicProjectIdInput)
    .output(basicProjectOutput)
    .query(({ ctx, input }) => getBasicProject(ctx.db, ctx.principal, input.id)),

  replace: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/projects/{id}', tags, summary: 'Replace name and description (and move to the status given)', errorResponses: moves } })
    .input(basicProjectReplaceInput)
    .output(basicProjectOutput)
    .mutation(({ ctx, input }) => replaceBasicProject(ctx.db, ctx.principal, input)),

  update: authedProcedure
    .meta({ openapi: { method: 'PATCH', path: '/projects/{id}', tags, summary: 'Change the fields sent', errorResponses: moves } })
    .input(basicProjectPatchInput)
    .output(basicProjectOutput)
    .mutation(({ ctx, input }) => patchBasicProject(ctx.db, ctx.principal, input)),

  delete: authedProcedure
    .meta({ successStatus: 204, openapi: { method: 'DELETE', path: '/projects/{id}', tags, summary: 'Delete a project and everything that belongs to it (organization admins and owners)' } })
    .input(basicProjectIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteBasicProject(ctx.db, ctx.principal, input.id)),
});
