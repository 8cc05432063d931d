import { z } from 'zod';
import { pagedOutput, pagingInput } from '../../http/paging.ts';

export const assignmentOutput = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  projectId: z.uuid(),
  customerUserId: z.uuid(),
  createdAt: z.iso.datetime(),
});

export const listAssignmentsInput = pagingInput.extend({ organizationId: z.uuid() });
export const listAssignmentsOutput = pagedOutput('assignments', assignmentOutput);

export const createAssignmentInput = z
  .object({
    organizationId: z.uuid(),
    projectId: z.uuid(),
    customerUserId: z.uuid().describe('A member of the organization with the role customer'),
  })
  .strict();

export const assignmentIdInput = z.object({ id: z.uuid() });
export const deletedAssignmentOutput = z.object({ id: z.uuid(), deleted: z.literal(true) });

export type Assignment = z.infer<typeof assignmentOutput>;
