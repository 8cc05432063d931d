import { z } from 'zod';
import { uuidInput } from '../../http/uuid-input.ts';
import { projectPhases } from '../projects/projects.schema.ts';

export const specificationStatuses = ['compiling', 'completed', 'failed'] as const;

export const compileSpecificationInput = z.strictObject({
  projectId: uuidInput(),
  options: z
    .strictObject({
      format: z.enum(['v1', 'v2']).optional().describe('The specFormat answer when absent, else v1'),
      includeTestPlan: z.boolean().optional().describe('Test cases, one per requirement; the includeTestPlan answer when absent'),
      includeTaskGraph: z.boolean().optional().describe('Tasks with their dependencies: model each entity, build each feature, release'),
      includeRunbook: z.boolean().optional().describe('Release steps for the releaseStrategy answer'),
    })
    .optional(),
});

export const compileSpecificationOutput = z.object({
  specId: z.uuid(),
  status: z.literal('compiling'),
  estimatedTime: z.number().int().describe('Seconds until the specification is likely compiled'),
  statusUrl: z.string().describe('GET it for the specification'),
});

export const specificationIdInput = z.object({ specId: uuidInput() });

const finding = z.object({ code: z.string(), message: z.string() });

/** A compiled specification (seed §2.2), whoever wrote it: the compiler, or agents section by section. */
export const compiledSpec = z.object({
  metadata: z.object({
    title: z.string(),
    projectId: z.uuid(),
    version: z.string(),
    format: z.enum(['v1', 'v2']),
    compiledFromPhase: z.enum(projectPhases),
    generator: z.string(),
    draftedBy: z.record(z.string(), z.string()).optional().describe('Which agent drafted each section, when agents did; the others are compiled'),
  }),
  overview: z.object({
    name: z.string(),
    description: z.string().nullable(),
    problem: z.string().nullable(),
    audience: z.array(z.string()),
    platforms: z.array(z.string()),
    capabilities: z.array(z.string()),
    integrations: z.array(z.string()),
  }),
  entities: z.array(
    z.object({
      name: z.string(),
      path: z.string(),
      fields: z.array(z.object({ name: z.string(), type: z.string(), required: z.boolean() })),
      operations: z.array(z.string()),
    }),
  ),
  endpoints: z.array(z.object({ method: z.string(), path: z.string(), summary: z.string(), source: z.string() })),
  workflows: z.array(z.object({ name: z.string(), feature: z.string(), steps: z.array(z.string()) })),
  requirements: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(['functional', 'non-functional']),
      title: z.string(),
      description: z.string(),
      priority: z.enum(['must', 'should', 'could']),
      source: z.string().describe('features.<key> for a selected feature, user-story for a user story (US-…), the answer for a non-functional one'),
      acceptanceCriteria: z.array(z.string()).optional().describe("A user story's acceptance criteria"),
    }),
  ),
  testCases: z.array(z.object({ id: z.string(), requirementId: z.string(), title: z.string(), expected: z.string() })),
  architecture: z.object({
    style: z.string().nullable(),
    patterns: z.array(z.string()),
    multiTenant: z.boolean(),
    platforms: z.array(z.string()),
    timeline: z.string().nullable(),
    teamSize: z.number().nullable(),
    releaseStrategy: z.string().nullable(),
    milestones: z.array(z.string()),
  }),
  designSystem: z.object({ visualStyle: z.string().nullable(), brandColors: z.string().nullable(), accessibility: z.string().nullable() }).nullable(),
  taskGraph: z.object({ tasks: z.array(z.object({ id: z.string(), title: z.string(), dependsOn: z.array(z.string()) })) }).optional(),
  runbook: z.object({ strategy: z.string().nullable(), steps: z.array(z.string()) }).optional(),
});

export const specificationOutput = z.object({
  id: z.uuid(),
  projectId: z.uuid(),
  version: z.string().describe("The project's compile count: 1, 2, …"),
  status: z.enum(specificationStatuses),
  createdAt: z.iso.datetime(),
  compiledAt: z.iso.datetime().nullable(),
  spec: compiledSpec.nullable().describe('Null while compiling, or when the compile failed'),
  validation: z
    .object({ passed: z.boolean(), errors: z.array(finding), warnings: z.array(finding) })
    .nullable()
    .describe('passed when there is no error: a stated problem, at least one entity, and one functional requirement (a selected feature or a user story)'),
  errorMessage: z.string().nullable().describe('Why the compile failed'),
});

export type CompileSpecificationInput = z.infer<typeof compileSpecificationInput>;
export type SpecificationOutput = z.infer<typeof specificationOutput>;
export type CompiledSpec = z.infer<typeof compiledSpec>;
