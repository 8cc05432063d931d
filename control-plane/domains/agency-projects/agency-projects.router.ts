import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import {
  assignmentIdInput,
  assignmentOutput,
  createAssignmentInput,
  deletedAssignmentOutput,
  listAssignmentsInput,
  listAssignmentsOutput,
} from './agency-projects.schema.ts';
import { assignProject, listOrganizationAssignments, unassignProject } from './agency-projects.service.ts';

const tags = ['agency projects'];

export const agencyProjectsRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/agency-projects', tags, summary: "An organization's project assignments to customers (admin or owner)" } })
    .input(listAssignmentsInput)
    .output(listAssignmentsOutput)
    .query(({ ctx, input }) => listOrganizationAssignments(ctx.db, ctx.principal, input)),

  create: authedProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/agency-projects',
        tags,
        summary: "Assign one of the organization's projects to one of its customers (admin or owner)",
        errorResponses: { 404: 'NOT_FOUND: no such organization, project or user', 409: 'CONFLICT: the project is assigned to this customer already' },
      },
    })
    .input(createAssignmentInput)
    .output(assignmentOutput)
    .mutation(({ ctx, input }) => assignProject(ctx.db, ctx.principal, input)),

  delete: authedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/agency-projects/{id}',
        tags,
        summary: 'Remove an assignment (admin or owner)',
        errorResponses: { 404: 'NOT_FOUND: no such assignment, or one of an organization where the caller is not an admin or owner' },
      },
    })
    .input(assignmentIdInput)
    .output(deletedAssignmentOutput)
    .mutation(({ ctx, input }) => unassignProject(ctx.db, ctx.principal, input.id)),
});
