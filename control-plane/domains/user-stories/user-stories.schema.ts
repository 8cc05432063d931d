import { z } from 'zod';
import { basicListInput, basicListOutput } from '../../basic/basic-paging.ts';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { uuidInput } from '../../http/uuid-input.ts';
import { visibleName } from '../../http/visible-name.ts';

/** In rank order, lowest first: a list sorted by priority or status goes by this, not by the alphabet. */
export const userStoryPriorities = ['low', 'medium', 'high', 'critical'] as const;
export const userStoryStatuses = ['draft', 'ready', 'in_progress', 'done'] as const;
export const userStorySortFields = ['createdAt', 'updatedAt', 'title', 'priority', 'status'] as const;

const MAX_CRITERIA = 100;

export const userStoryOutput = z.object({
  id: z.uuid(),
  projectId: z.uuid(),
  title: z.string(),
  description: z.string().optional().describe('Absent when the story has none'),
  priority: z.enum(userStoryPriorities),
  status: z.enum(userStoryStatuses),
  acceptanceCriteria: z.array(z.string()),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

const title = visibleName(500);
// null as "none", as a PATCH of a project takes it, so a story's description can be taken away.
const description = z.string().max(10_000).nullable();
const acceptanceCriteria = z.array(z.string().trim().min(1).max(2_000)).max(MAX_CRITERIA);
const CRITERIA = `What shows the story met, one statement each (1 to 2,000 characters); at most ${MAX_CRITERIA}`;

const storyFields = {
  projectId: uuidInput().describe("The story's project: one you see; a story stays in its project"),
  title,
  description: description.optional().describe('None when absent or null'),
  priority: z.enum(userStoryPriorities).optional().describe('medium when absent'),
  status: z.enum(userStoryStatuses).optional().describe('draft when absent'),
  acceptanceCriteria: acceptanceCriteria.optional().describe(`${CRITERIA}; none when absent`),
};

/** POST and PUT: the whole story. What a PUT leaves out takes its default, as a create does. */
export const userStoryInput = z
  .strictObject({
    id: uuidInput().optional().describe("The story's id: a duplicate is 409 CONFLICT; assigned when absent. A PUT that sends one must send the path's"),
    ...storyFields,
  })
  .superRefine(refuseUnstorableText);

/** PUT as the route takes it: the path's id beside the whole story. */
export const userStoryReplaceRequest = z.strictObject({ id: uuidInput(), ...storyFields }).superRefine(refuseUnstorableText);

const patchFields = {
  projectId: uuidInput().optional().describe("May only repeat the story's project: a story stays in its project"),
  title: title.optional(),
  description: description.optional().describe('null takes the description away'),
  priority: z.enum(userStoryPriorities).optional(),
  status: z.enum(userStoryStatuses).optional(),
  acceptanceCriteria: acceptanceCriteria.optional().describe(`${CRITERIA}; replaced whole when sent`),
};

/** PATCH: only the fields sent change; none sent changes nothing, updatedAt included. */
export const userStoryPatchInput = z.strictObject(patchFields).superRefine(refuseUnstorableText);

/** PATCH as the route takes it: the path's id beside the fields. */
export const userStoryPatchRequest = z.strictObject({ id: uuidInput(), ...patchFields }).superRefine(refuseUnstorableText);

export const userStoryIdInput = z.object({ id: uuidInput() });

// Every field has a default or is optional, so a call may send no input at all.
export const userStoryListInput = basicListInput(userStorySortFields)
  .extend({ projectId: uuidInput().optional().describe("Only this project's stories (none when it is not one you see)") })
  .prefault({});

export const userStoryListOutput = basicListOutput(userStoryOutput);

export type UserStoryOutput = z.infer<typeof userStoryOutput>;
export type UserStoryInput = z.infer<typeof userStoryInput>;
export type UserStoryPatchInput = z.infer<typeof userStoryPatchInput>;
export type UserStoryListInput = z.infer<typeof userStoryListInput>;
export type UserStorySortField = (typeof userStorySortFields)[number];
