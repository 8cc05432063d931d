import type { ProjectPhase, ProjectRow } from '../../db/database.ts';
import type { BasicProjectStatus } from './projects.basic-schema.ts';

/** The phase group each phase belongs to, as Variant A names it (DESIGN §5.2). */
const groupOfPhase = {
  CREATED: 'draft',
  DISCOVERY: 'discovery',
  FEATURE_SELECTION: 'discovery',
  PLAN_GENERATION: 'planning',
  PLANNING: 'planning',
  VISUAL_DISCOVERY: 'planning',
  SPECIFICATION: 'specification',
} as const satisfies Record<ProjectPhase, Exclude<BasicProjectStatus, 'complete'>>;

/** The phase writing a group's status moves a project to: the first phase of that group. */
export const firstPhaseOfGroup = {
  draft: 'CREATED',
  discovery: 'DISCOVERY',
  planning: 'PLAN_GENERATION',
  specification: 'SPECIFICATION',
} as const satisfies Record<Exclude<BasicProjectStatus, 'complete'>, ProjectPhase>;

/** A project's Variant A status: complete once completed, else its phase's group (an archived project keeps its phase's). */
export function basicStatusOf(project: Pick<ProjectRow, 'status' | 'phase'>): BasicProjectStatus {
  return project.status === 'completed' ? 'complete' : groupOfPhase[project.phase];
}
