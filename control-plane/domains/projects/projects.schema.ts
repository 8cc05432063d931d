import { z } from 'zod';
import { pagingInput, pagedOutput } from '../../http/paging.ts';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { storedJsonAtMost } from '../../db/stored-json-size.ts';
import { uuidInput } from '../../http/uuid-input.ts';
import { visibleName } from '../../http/visible-name.ts';

export const projectPhases = ['CREATED', 'DISCOVERY', 'FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY', 'SPECIFICATION'] as const;
export const projectStatuses = ['active', 'completed', 'archived'] as const;

/** The progress keys of each phase after CREATED, as the list form names them. */
export const progressKeys = ['discovery', 'featureSelection', 'planGeneration', 'planning', 'visualDiscovery', 'specification'] as const;

const fraction = z.number().min(0).max(1);
const metadataSchema = z.record(z.string(), z.unknown());

/**
 * Metadata is a project's small annotations, and every list page carries it (up to 200 projects):
 * unbounded, a few megabyte-sized ones made each page hundreds of megabytes and a tRPC batch of
 * pages could exhaust the heap. Counted as PostgreSQL gives it back: 16 KiB of `1e308`s measured
 * as sent came back as 700 KB of digits per project, and a page of 200 as 140 MB.
 */
const METADATA_MAX_BYTES = 16_384;

// Said in the OpenAPI document too, so a REST caller learns the cap before a 400 teaches it.
const metadataInput = storedJsonAtMost(metadataSchema, METADATA_MAX_BYTES).describe(
  `Free-form; replaced whole when sent. At most ${METADATA_MAX_BYTES} bytes as JSON, counted as stored (a space after each ":" and ","; numbers without exponent: 1e308 is 309 digits)`,
);

export const listProgressOutput = z.object({
  overall: fraction,
  ...Object.fromEntries(progressKeys.map((key) => [key, fraction])),
} as { overall: typeof fraction } & Record<(typeof progressKeys)[number], typeof fraction>);

export const detailProgressOutput = z.object({
  overall: fraction,
  byPhase: z.object(Object.fromEntries(progressKeys.map((key) => [key, fraction])) as Record<(typeof progressKeys)[number], typeof fraction>),
});

export const projectSummaryOutput = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  status: z.enum(projectStatuses),
  phase: z.enum(projectPhases),
  organizationId: z.uuid().nullable(),
  progress: listProgressOutput,
  metadata: metadataSchema,
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export const projectDetailOutput = projectSummaryOutput.omit({ progress: true }).extend({
  template: z.string().nullable(),
  progress: detailProgressOutput,
  discoveryStartedAt: z.iso.datetime().nullable(),
  discoveryCompletedAt: z.iso.datetime().nullable(),
  featureSelectionStartedAt: z.iso.datetime().nullable(),
  featureSelectionCompletedAt: z.iso.datetime().nullable(),
  planGenerationStartedAt: z.iso.datetime().nullable(),
  discoveryOutput: metadataSchema.nullable(),
  selectedFeatures: z.array(z.object({ key: z.string(), name: z.string() })).describe('The features chosen in feature selection (the flow), by key and name'),
  ontologyCoverage: z.number(),
});

/** The seed's list filter: one status, or `all` (its stated default, so a client may send it). */
export const projectStatusFilters = [...projectStatuses, 'all'] as const;

// Every field has a default, so a call may send no input at all (`client.projects.list.query()`).
export const listProjectsInput = pagingInput
  .extend({ status: z.enum(projectStatusFilters).describe('One status, or all (the default)').optional() })
  .prefault({});
export const listProjectsOutput = pagedOutput('projects', projectSummaryOutput);

export const createProjectInput = z
  .strictObject({
    name: visibleName(200),
    // null as an answer shows "none" (and as PATCH takes it), so a create may send it too.
    description: z.string().max(10_000).nullable().optional(),
    template: z.string().trim().min(1).max(100).optional(),
    metadata: metadataInput.optional(),
    organizationId: uuidInput().optional().describe('Where the project belongs (you must be a member, admin or owner); the first you joined as such when absent'),
  })
  .superRefine(refuseUnstorableText);

/** Only these may change; phase and every read-only field are refused by name (strict object). */
export const updateProjectInput = z
  .strictObject({
    projectId: uuidInput(),
    name: visibleName(200).optional(),
    description: z.string().max(10_000).nullable().optional(),
    metadata: metadataInput.optional(),
    status: z.enum(['active', 'archived']).optional(),
  })
  .superRefine(refuseUnstorableText);

export const projectIdInput = z.object({ projectId: uuidInput() });

export const deletedProjectOutput = z.object({
  projectId: z.uuid(),
  deletedTables: z.array(z.string()),
  rowsDeleted: z.number().int(),
});

export type ProjectSummary = z.infer<typeof projectSummaryOutput>;
export type ProjectDetail = z.infer<typeof projectDetailOutput>;
export type CreateProjectInput = z.infer<typeof createProjectInput>;
export type UpdateProjectInput = z.infer<typeof updateProjectInput>;
export type ProjectStatusFilter = (typeof projectStatusFilters)[number];
