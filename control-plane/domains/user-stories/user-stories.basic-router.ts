import { z } from 'zod';
import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import { userStoryIdInput, userStoryInput, userStoryListInput, userStoryListOutput, userStoryOutput, userStoryPatchRequest, userStoryReplaceRequest } from './user-stories.schema.ts';
import {
  createUserStoryForCaller,
  deleteUserStoryForCaller,
  getUserStoryForCaller,
  listUserStoriesForCaller,
  replaceUserStoryForCaller,
  updateUserStoryForCaller,
} from './user-stories.service.ts';

const tags = ['userstories'];
const writers = { 403: "FORBIDDEN: a customer reads a project's stories but does not write them" };

/** Variant A's /userstories (served under /api/basic; seed §2.1, DESIGN §5.2). */
export const userStoriesRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/userstories', tags, summary: 'User stories of the projects the caller sees (or of one), a page at a time' } })
    .input(userStoryListInput)
    .output(userStoryListOutput)
    .query(({ ctx, input }) => listUserStoriesForCaller(ctx.db, ctx.principal, input)),

  create: authedProcedure
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/userstories', tags, summary: 'Add a user story to a project', errorResponses: { ...writers, 404: 'NOT_FOUND: no such project visible to the caller', 409: 'CONFLICT: the id is taken, or the project holds 200 stories, the most it may' } } })
    .input(userStoryInput)
    .output(userStoryOutput)
    .mutation(({ ctx, input }) => createUserStoryForCaller(ctx.db, ctx.principal, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/userstories/{id}', tags, summary: 'A user story' } })
    .input(userStoryIdInput)
    .output(userStoryOutput)
    .query(({ ctx, input }) => getUserStoryForCaller(ctx.db, ctx.principal, input.id)),

  replace: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/userstories/{id}', tags, summary: 'Replace a user story (fields left out take their defaults)', errorResponses: writers } })
    .input(userStoryReplaceRequest)
    .output(userStoryOutput)
    .mutation(({ ctx, input }) => replaceUserStoryForCaller(ctx.db, ctx.principal, input.id, input)),

  update: authedProcedure
    .meta({ openapi: { method: 'PATCH', path: '/userstories/{id}', tags, summary: 'Change the fields sent', errorResponses: writers } })
    .input(userStoryPatchRequest)
    .output(userStoryOutput)
    .mutation(({ ctx, input: { id, ...patch } }) => updateUserStoryForCaller(ctx.db, ctx.principal, id, patch)),

  delete: authedProcedure
    .meta({ successStatus: 204, openapi: { method: 'DELETE', path: '/userstories/{id}', tags, summary: 'Delete a user story', errorResponses: writers } })
    .input(userStoryIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteUserStoryForCaller(ctx.db, ctx.principal, input.id)),
});
