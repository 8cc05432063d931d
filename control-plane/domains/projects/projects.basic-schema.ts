import { z } from 'zod';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { basicListInput, basicListOutput } from '../../basic/basic-paging.ts';
import { uuidInput } from '../../http/uuid-input.ts';
import { visibleName } from '../../http/visible-name.ts';

/**
 * Variant A's project status (seed §2.1), read from the project's phase (DESIGN §5.2): CREATED is
 * draft; DISCOVERY and FEATURE_SELECTION discovery; PLAN_GENERATION, PLANNING and VISUAL_DISCOVERY
 * planning; SPECIFICATION specification; a completed project is complete.
 */
export const basicProjectStatuses = ['draft', 'discovery', 'planning', 'specification', 'complete'] as const;
export type BasicProjectStatus = (typeof basicProjectStatuses)[number];

export const basicProjectOutput = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string().optional().describe('Left out when the project has none'),
  status: z.enum(basicProjectStatuses),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

const statusInput = z
  .enum(basicProjectStatuses)
  .describe('Moves the flow forward to the first phase of the group named (discovery: DISCOVERY, planning: PLAN_GENERATION, specification: SPECIFICATION), by the flow’s own rules; complete is written from specification. A phase never moves back');
const readOnlyTime = z.iso.datetime({ offset: true }).describe('Read-only: taken and ignored, so an answer can be sent back as it came');

const name = visibleName(200);
const description = z.string().max(10_000).nullable().optional();
/** What every write takes beside its fields: the status to move to, and the read-only times an answer carries. */
const writeFields = { status: statusInput.optional(), createdAt: readOnlyTime.optional(), updatedAt: readOnlyTime.optional() };

/** ProjectInput (seed §2.1): POST. */
export const basicProjectInput = z
  .strictObject({
    id: uuidInput().optional().describe('Your id for the project; one is made up when absent. An id already taken is CONFLICT'),
    name,
    description,
    ...writeFields,
  })
  .superRefine(refuseUnstorableText);

/** PUT: the path's id beside the whole project (the body's `id`, if sent, must be the path's). */
export const basicProjectReplaceInput = z.strictObject({ id: uuidInput(), name, description, ...writeFields }).superRefine(refuseUnstorableText);

/** PATCH: the fields sent change, the rest stay. */
export const basicProjectPatchInput = z.strictObject({ id: uuidInput(), name: name.optional(), description, ...writeFields }).superRefine(refuseUnstorableText);

export const basicProjectIdInput = z.object({ id: uuidInput() });

export const basicProjectSortFields = ['createdAt', 'updatedAt', 'name'] as const;
export const basicListProjectsInput = basicListInput(basicProjectSortFields).prefault({});
export const basicListProjectsOutput = basicListOutput(basicProjectOutput);

export type BasicProject = z.infer<typeof basicProjectOutput>;
export type BasicProjectInput = z.infer<typeof basicProjectInput>;
export type BasicProjectPatch = z.infer<typeof basicProjectPatchInput>;
