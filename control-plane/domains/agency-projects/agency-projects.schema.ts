import { z } from 'zod';
import { pagedOutput, pagingInput } from '../../http/paging.ts';
import { uuidInput } from '../../http/uuid-input.ts';

export const assignmentOutput = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  projectId: z.uuid(),
  customerUserId: z.uuid(),
  createdAt: z.iso.datetime(),
});

export const listAssignmentsInput = pagingInput.extend({ organizationId: uuidInput() });
export const listAssignmentsOutput = pagedOutput('assignments', assignmentOutput);

export const createAssignmentInput = z
  .object({
    organizationId: uuidInput(),
    projectId: uuidInput(),
    customerUserId: uuidInput().describe('A member of the organization with the role customer'),
  })
  .strict();

export const assignmentIdInput = z.object({ id: uuidInput() });
export const deletedAssignmentOutput = z.object({ id: z.uuid(), deleted: z.literal(true) });

export type Assignment = z.infer<typeof assignmentOutput>;
