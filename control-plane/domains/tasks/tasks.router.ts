import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import { createTaskInput, listTasksInput, listTasksOutput, submitActionInput, submitActionOutput, taskOutput, userTasksInput, userTasksOutput } from './tasks.schema.ts';
import { createTask, listProjectTasks, listTasksOfCaller, submitAction } from './tasks.service.ts';

const tags = ['tasks'];

/** Tasks a project asks of people and agents, and the actions that answer them (seed §4.6, DESIGN §5.6). */
export const tasksRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/tasks', tags, summary: "A project's tasks, oldest first", errorResponses: { 404: 'NOT_FOUND: no such project' } } })
    .input(listTasksInput)
    .output(listTasksOutput)
    .query(({ ctx, input }) => listProjectTasks(ctx.db, ctx.principal, input)),

  create: authedProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/tasks',
        tags,
        summary: 'Create a task of a project, with its actions; blocked until its dependencies complete',
        errorResponses: { 403: "FORBIDDEN: a customer, or a project with no organization; ORG_NOT_MEMBER: not a member of the project's organization", 404: 'NOT_FOUND: no such project' },
      },
    })
    .input(createTaskInput)
    .output(taskOutput)
    .mutation(({ ctx, input }) => createTask(ctx.db, ctx.principal, input)),

  submitAction: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/tasks/{taskId}/actions/{actionId}',
        tags,
        summary: "Submit one of a task's actions (idempotent on idempotencyKey); it completes the task",
        errorResponses: {
          403: 'FORBIDDEN: a customer submitting a task not assigned to them',
          404: 'NOT_FOUND: no such task or action',
          409: 'CONFLICT: the task is blocked, completed or cancelled, or a submission with this key is in progress',
          422: 'IDEMPOTENCY_MISMATCH: the key was used for another submission',
        },
      },
    })
    .input(submitActionInput)
    .output(submitActionOutput)
    .mutation(({ ctx, input }) => submitAction(ctx.db, ctx.principal, input)),

  mine: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/user-tasks', tags, summary: 'The tasks assigned to the caller across the projects they see, with counts' } })
    .input(userTasksInput)
    .output(userTasksOutput)
    .query(({ ctx, input }) => listTasksOfCaller(ctx.db, ctx.principal, input)),
});
